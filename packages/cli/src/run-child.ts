/**
 * The child process of `rein run`: loads the module, runs the entry under
 * the reach policy the parent passed, publishes `currentReach()` figures
 * for the status line, records into the session store, and writes the
 * result for the parent. Every reach check happens here.
 * @internal
 */
import { AsyncLocalStorage } from "node:async_hooks";
import { isPostgresUrl, openPostgresStore } from "./postgres-store";
import { rmSync, writeFileSync } from "node:fs";
import { isAbsolute, resolve } from "node:path";
import {
  addPreInvocationHook,
  Agent,
  Context,
  currentReach,
  InterruptedError,
  ReachPolicy,
  SessionStore,
  toRecordable,
  withRunListener,
  type ReachPolicyOptions,
} from "rein";
import { GuardFigureCollector } from "./guard-figures";
import { entriesOf, loadModule } from "./load-module";
import { reachFromFlags } from "./reach-from-flags";
import { openReachLog } from "./reach-log";
import { StatusPublisher, statusPaths } from "./status-channel";
import type { ReachFigures } from "./status-line";

/** What the parent passes in `REIN_CLI_RUN`. @internal */
export interface ChildRunSpec {
  readonly module: string;
  readonly entry: string;
  readonly task: string;
  readonly maxReach?: number;
  /** The `--env` given, if any (the child's REIN_ENV is set to it). */
  readonly env?: string;
  readonly store: string;
  readonly sessionId: string;
  readonly statusDir: string;
  /** Where `--verbose` writes the reach status log (absent without it). */
  readonly reachLog?: string;
  /** tsx's CommonJS hook, registered right before the module is loaded (absent when the parent registered it, or the module needs none). */
  readonly tsxHook?: string;
}

/** What the child writes to `result.json`. @internal */
export type ChildResult =
  | { readonly ok: true; readonly answer: unknown }
  | { readonly ok: false; readonly interrupted?: boolean; readonly error: { readonly name: string; readonly message: string; readonly stack?: string } };

type AgentClass = new (options?: { reach?: ReachPolicy | ReachPolicyOptions; context?: Context }) => Agent;

async function loadEntry(spec: ChildRunSpec): Promise<{ agent: AgentClass; method: string }> {
  const path = isAbsolute(spec.module) ? spec.module : resolve(spec.module);
  // After this process's own modules: only what the module brings in goes through tsx (run-command.ts, childCommand).
  if (spec.tsxHook !== undefined) require(spec.tsxHook);
  const entries = entriesOf(await loadModule(path), spec.module);
  const pair = entries[spec.entry];
  const names = Object.keys(entries).join(", ") || "none";
  if (!Array.isArray(pair) || pair.length !== 2 || typeof pair[0] !== "function" || typeof pair[1] !== "string") {
    throw new Error(`${spec.module} has no entry '${spec.entry}' of the form [AgentClass, "method"] (entries: ${names})`);
  }
  const [agent, method] = pair as [AgentClass, string];
  if (typeof (agent.prototype as unknown as Record<string, unknown>)[method] !== "function") {
    throw new Error(`entry '${spec.entry}': ${agent.name} has no method '${method}'`);
  }
  return { agent, method };
}

/** What the parent prints of a failure: an Error's name and first line, or any other thrown value as rein records it. */
function errorOf(error: unknown): { name: string; message: string; stack?: string } {
  if (error instanceof Error) return { name: error.name, message: error.message.split("\n")[0] ?? "", stack: error.stack };
  const recorded = toRecordable(error);
  return { name: "Error", message: typeof recorded === "string" ? recorded : JSON.stringify(recorded) };
}

async function runChild(spec: ChildRunSpec): Promise<void> {
  const paths = statusPaths(spec.statusDir);
  const publisher = new StatusPublisher(paths);
  const reachLog = spec.reachLog === undefined ? undefined : openReachLog(spec.reachLog, spec.sessionId);
  const started = Date.now();
  let seq = 0;
  // The innermost call entered last: the timer reads currentReach() inside it, so the figures stay live between entries.
  let probe: (<R>(fn: () => R) => R) | undefined;
  const guards = new GuardFigureCollector();
  const publish = (): void => {
    const status = probe?.(() => currentReach());
    const guardFigures = probe?.(() => guards.figures());
    const figure = (pair: { used: number; limit: number }) => ({ used: pair.used, limit: Number.isFinite(pair.limit) ? pair.limit : null });
    const reach: ReachFigures | undefined =
      status === undefined
        ? undefined
        : { depth: figure(status.depth), memoryMb: figure(status.memoryMb), zone: status.zone, tokens: figure(status.tokens), costUsd: figure(status.costUsd), elapsedMs: status.elapsedMs };
    const message = { seq: ++seq, elapsedMs: Date.now() - started, reach, ...(guardFigures === undefined ? {} : { guards: guardFigures }) };
    publisher.publish(message);
    reachLog?.write(message);
  };
  addPreInvocationHook((call) => {
    guards.observeCall(call);
    if (currentReach() !== undefined) probe = AsyncLocalStorage.snapshot();
    publish();
  });
  const timer = setInterval(publish, 100);
  const finish = (result: ChildResult, code: number): never => {
    clearInterval(timer);
    writeFileSync(paths.result, JSON.stringify(result));
    publisher.close();
    reachLog?.close();
    process.exit(code);
  };

  // A postgres:// store records into that database (its own shutdown handler, as the file store's).
  // A store that cannot be opened (a path under a file, a foreign database, a lock held past busyTimeoutMs) is the
  // run's result, told in one line by the parent — not a crash of this process.
  const store = (() => {
    try {
      return isPostgresUrl(spec.store) ? openPostgresStore(spec.store, { shutdownFlush: true }) : new SessionStore({ path: spec.store });
    } catch (error) {
      return finish({ ok: false, error: errorOf(error) }, 1);
    }
  })();
  process.on("SIGINT", () => {
    // The store's own shutdown handler (installed first) has flushed and marked running nodes interrupted.
    finish({ ok: false, interrupted: true, error: { name: "Interrupted", message: "interrupted by SIGINT" } }, 130);
  });
  const parentGone = new AbortController();
  whenParentGone(() => {
    // `rein run` died without forwarding a signal (SIGKILL, a crash): nobody shows this run any more, so it stops
    // as if interrupted — the run's signal fires, its calls end `interrupted`, the store is closed, and the status
    // directory the parent would have removed goes too.
    parentGone.abort(new InterruptedError("the rein run process that started this run is gone"));
    process.once("exit", () => rmSync(spec.statusDir, { recursive: true, force: true }));
    // A run that ignores its signal in a synchronous loop cannot be helped; one stuck otherwise is ended by the store's SIGTERM handling.
    setTimeout(() => process.kill(process.pid, "SIGTERM"), PARENT_GONE_GRACE_MS).unref();
  });
  publish();
  try {
    const { agent, method } = await loadEntry(spec);
    if (!store.listSessions().some((session) => session.id === spec.sessionId)) {
      store.createSession(spec.sessionId, { agentId: agent.name, title: spec.task.slice(0, 200) });
    }
    const context = Context.forSession(store, spec.sessionId);
    const instance = new agent({ reach: reachFromFlags(spec), context }) as unknown as Record<string, (task: string) => unknown>;
    // An entry may be any class with the method; only an Agent has a runtime with maxSteps.
    guards.setStepLimit((instance as { runtime?: { maxSteps?: number } }).runtime?.maxSteps);
    const answer = await withRunListener((event) => guards.observeEvent(event), () => instance[method]!(spec.task), { signal: parentGone.signal });
    store.close();
    // The answer as the session recorded it: a bigint or a cycle is printed, not a failed run.
    finish({ ok: true, answer: answer === undefined ? undefined : toRecordable(answer) }, 0);
  } catch (error) {
    try {
      store.close();
    } catch {
      /* the error of the run is what matters */
    }
    if (parentGone.signal.aborted) finish({ ok: false, interrupted: true, error: { name: "Interrupted", message: "the rein run process is gone" } }, 130);
    finish({ ok: false, error: errorOf(error) }, 1);
  }
}

/** How long a run whose parent is gone has to end on its signal before the process stops itself with SIGTERM. */
const PARENT_GONE_GRACE_MS = 5_000;

/**
 * Calls `onGone` once when the `rein run` process that spawned this one is
 * gone: its IPC channel disconnects (the kernel closes it whatever killed
 * the parent, SIGKILL included). The channel does not keep this process
 * alive, and writes to the parent's closed pipes are dropped, not fatal.
 */
function whenParentGone(onGone: () => void): void {
  if (typeof process.send !== "function") return;
  process.channel?.unref();
  process.once("disconnect", () => {
    for (const stream of [process.stdout, process.stderr]) stream.on("error", () => undefined);
    onGone();
  });
}

const raw = process.env["REIN_CLI_RUN"];
if (raw !== undefined) {
  void runChild(JSON.parse(raw) as ChildRunSpec);
}
