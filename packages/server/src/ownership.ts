import type { Caller } from "./auth/caller";

/**
 * Ownership, by naming: with auth on, a key's sessions are stored as
 * `k.<key id>.<the name the client chose>`, so each key has its own session
 * names (another key naming `s1` reaches its own `s1`, never this one's:
 * a 404, no existence leak), and a resumable run belongs to the key whose
 * session holds it. Runs in flight are kept under `<owner>\n<run id>`, so a
 * client-chosen run id is scoped to its key, and the server's own runs
 * (resume on start) under an owner no client has.
 * @internal
 */
export const INTERNAL_OWNER = "internal:";

/** @internal Where a caller's session of the given name is stored. */
export function storedSessionId(caller: Caller, clientId: string): string {
  return caller.owner === "" ? clientId : `${caller.owner}.${clientId}`;
}

/** @internal The name a caller knows a stored session by (an admin's view of another key's session keeps the stored id). */
export function clientSessionId(caller: Caller, storedId: string): string {
  const prefix = `${caller.owner}.`;
  return caller.owner !== "" && storedId.startsWith(prefix) ? storedId.slice(prefix.length) : storedId;
}

/** @internal Whether a caller may see a stored session (and the runs it holds). */
export function ownsSession(caller: Caller, storedId: string): boolean {
  return caller.seesAll || storedId.startsWith(`${caller.owner}.`);
}

/**
 * @internal The stored session a caller's `id` names: its own session of that
 * name; for an admin without one, the stored id itself (another key's
 * `k.<id>.<name>`, or a session made without auth).
 */
export async function sessionFor(caller: Caller, id: string, exists: (stored: string) => boolean | Promise<boolean>): Promise<string | undefined> {
  const own = storedSessionId(caller, id);
  if (await exists(own)) return own;
  if (caller.seesAll && own !== id && (await exists(id))) return id;
  return undefined;
}

/** @internal The key of a run in flight. */
export function flightKey(owner: string, runId: string): string {
  return `${owner}\n${runId}`;
}

/** @internal The run in flight a caller's `runId` names: its own; for an admin, any client's of that id (never the server's own). */
export function flightFor<V>(runs: ReadonlyMap<string, V>, caller: Caller, runId: string): V | undefined {
  const own = runs.get(flightKey(caller.owner, runId));
  if (own !== undefined || !caller.seesAll) return own;
  for (const [key, value] of runs) {
    if (key.endsWith(`\n${runId}`) && !key.startsWith(INTERNAL_OWNER)) return value;
  }
  return undefined;
}
