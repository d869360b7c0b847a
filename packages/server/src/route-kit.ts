import type { Context as HonoContext } from "hono";
import type { ReachBudget, ReachPolicy, SessionStoreLike } from "rein";
import type { ApiKeyScope, ApiKeyStore } from "./auth/api-key";
import type { Caller } from "./auth/caller";
import type { KeyRun } from "./auth/key-spend";
import type { BackgroundQueue } from "./background/background-queue";
import type { Entries } from "./entries";
import type { ErrorType, RequestError } from "./http-error";
import type { Flight } from "./flight";
import type { RunFeed } from "./run-feed";
import type { ServerState } from "./server-state";

/** A run id a client may choose (`X-Run-Id`), and the form of every id the server makes. @internal */
export const RUN_ID = /^[A-Za-z0-9._:-]{8,128}$/;

/** What {@link RouteKit.admit} gives a request that starts work. @internal */
export interface Admitted {
  readonly budget: ReachBudget;
  readonly traceparent: string | undefined;
  readonly runId: string;
  readonly caller: { callerRunId?: string };
}

/**
 * What `createServer` hands the routes it mounts from other files: its
 * options resolved once, and the one request gate every route goes through
 * (`who` authenticates, `admit` takes the received budget and run id,
 * `capped` starts a key's run under its spend caps, `fly` puts a run in
 * flight, `read` turns a store
 * fault into a 503, `fail` answers a typed error).
 * @internal
 */
export interface RouteKit {
  readonly entries: Entries;
  readonly store: SessionStoreLike;
  readonly policy: ReachPolicy;
  readonly state: ServerState;
  readonly maxBodyBytes: number;
  readonly heartbeatMs: number;
  readonly queue: BackgroundQueue | undefined;
  readonly keys: ApiKeyStore | undefined;
  readonly feed: RunFeed;
  readonly report: (error: unknown) => void;
  readonly who: (c: HonoContext, scope: ApiKeyScope) => Promise<Caller>;
  readonly fail: (c: HonoContext, type: ErrorType, message: string) => Response;
  readonly read: <R>(fn: () => R | Promise<R>) => Promise<R>;
  readonly admit: (c: HonoContext, caller: Caller, work: string) => Admitted;
  readonly capped: (caller: Caller) => Promise<KeyRun | undefined>;
  /** Puts run `runId` in flight (its id claimed before anything is awaited, then the key's run slot); `conflict` when the id is in flight already. */
  readonly fly: (caller: Caller, runId: string, conflict?: () => RequestError) => Promise<Flight>;
  /** The 400 of an `X-Run-Id` that is malformed or names a run in flight. */
  readonly badRunId: () => RequestError;
}
