/**
 * The parts of `@rein/core` a store needs that `@rein/core` does not export
 * (yet): the per-process writer registry (a store commits its writers' pending
 * batches on `flush`/`close` and forgets them on `deleteSession`/`close`), the
 * graph renderer shared by every store's `exportGraph`, and the argument
 * checks every store applies. The registry is state: it must be the very
 * module instance core's `SessionNodeWriter` uses, so it is loaded from
 * beside the `@rein/core` entry that this package resolves (its `src/` under
 * jest and tsx, its `dist/` under node), never copied.
 *
 * Once `@rein/core` exports these names, this file becomes plain re-exports.
 * @internal
 */
import { dirname, join } from "node:path";
import type { ExportGraphOptions, SessionCreateOptions, SessionGraphFormat, SessionInfo, SessionNode, SessionStoreLike } from "@rein/core";

interface WriterRegistry {
  flushPendingWriters(store: SessionStoreLike): void;
  releaseSharedWriter(store: SessionStoreLike, sessionId: string): void;
  releaseSharedWriters(store: SessionStoreLike): void;
}

interface GraphRenderer {
  renderSessionGraph(session: SessionInfo, nodes: readonly SessionNode[], format: SessionGraphFormat): string;
}

interface OptionsSchema<T> {
  parse(options: unknown): T;
}

interface SessionArguments {
  checkSessionId(owner: string, sessionId: unknown): void;
  checkNodeId(owner: string, nodeId: unknown, nullable?: boolean): void;
  checkCreateSessionArguments(owner: string, id: unknown, options: unknown): void;
  exportGraphOptionsSchema: OptionsSchema<ExportGraphOptions>;
}

let coreDirectory: string | undefined;

/** A module of `@rein/core` by its path inside the package's `src/` (or `dist/`). */
function coreModule<T>(path: string): T {
  coreDirectory ??= dirname(require.resolve("@rein/core"));
  return require(join(coreDirectory, path)) as T;
}

const registry = coreModule<WriterRegistry>("session/writer-registry");
const renderer = coreModule<GraphRenderer>("session/export-graph");
const sessionArguments = coreModule<SessionArguments>("options/session-arguments");

/** Commits every pending writer of `store`; throws the first failure after trying them all. @internal */
export const flushPendingWriters: WriterRegistry["flushPendingWriters"] = registry.flushPendingWriters;
/** Forgets the writer registered for one session of `store` (a deleted session). @internal */
export const releaseSharedWriter: WriterRegistry["releaseSharedWriter"] = registry.releaseSharedWriter;
/** Forgets every writer registered for `store` (a closed store). @internal */
export const releaseSharedWriters: WriterRegistry["releaseSharedWriters"] = registry.releaseSharedWriters;
/** Renders a session's nodes as JSON, Mermaid or dot, exactly as the other stores do. @internal */
export const renderSessionGraph: GraphRenderer["renderSessionGraph"] = renderer.renderSessionGraph;
/** Throws a `TypeError` unless `sessionId` is a non-empty string. @internal */
export const checkSessionId: SessionArguments["checkSessionId"] = sessionArguments.checkSessionId;
/** Throws a `TypeError` unless `nodeId` is a non-empty string (or null, when `nullable`). @internal */
export const checkNodeId: SessionArguments["checkNodeId"] = sessionArguments.checkNodeId;
/** Checks the arguments of `createSession`. @internal */
export const checkCreateSessionArguments: (owner: string, id: unknown, options: SessionCreateOptions | undefined) => void =
  sessionArguments.checkCreateSessionArguments;
/** Checks the options of `exportGraph`. @internal */
export const exportGraphOptionsSchema: OptionsSchema<ExportGraphOptions> = sessionArguments.exportGraphOptionsSchema;
