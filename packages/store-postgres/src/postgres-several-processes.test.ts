/**
 * Several processes, one session: 4 child processes open the same fresh
 * schema at once (the migration lock) and each makes 60 top-level agent
 * calls on one session, started at the same moment. seq stays unique, no
 * acknowledged node is lost, every call's nodes are chained, and the calls
 * of the processes interleave (the test checks that they raced).
 *
 * Every call re-reads the session's history, which the other processes keep
 * extending, so the cost grows with the square of the calls: 4 × 200 took
 * about 27 s of CPU (database and children) for what 4 × 60 shows too.
 */
import { PostgresSessionStore } from "./postgres-session-store";
import { freshSchemaName, startEmbeddedPostgres, type EmbeddedPostgresServer } from "./__fixtures__/embedded-postgres";
import { runStoreChildren } from "./__fixtures__/run-children";

let server: EmbeddedPostgresServer | undefined;
beforeAll(async () => {
  server = await startEmbeddedPostgres();
}, 60_000);
afterAll(async () => {
  await server?.stop();
});

const PROCESSES = 4;
const CALLS = 60;

test(`${PROCESSES} processes × ${CALLS} agent calls on one session: unique seq, nothing lost, every call chained`, async () => {
  const schema = freshSchemaName();
  const results = await runStoreChildren<{ calls: number; acknowledged: string[] }>(PROCESSES, [
    "agent",
    server!.connectionString,
    schema,
    "shared",
    String(CALLS),
    String(Date.now() + 2500),
  ]);
  const store = new PostgresSessionStore({ connectionString: server!.connectionString, schema, shutdownFlush: false });
  try {
    const nodes = store.readNodes("shared");
    const byId = new Map(nodes.map((node) => [node.id, node]));
    const seqs = nodes.map((node) => node.seq);
    expect(new Set(seqs).size).toBe(nodes.length);
    expect(store.getSession("shared")).toMatchObject({ nodeCount: nodes.length, lastSeq: Math.max(...seqs) });
    const acknowledged = results.flatMap((result) => result.acknowledged);
    expect(acknowledged.length).toBeGreaterThanOrEqual(PROCESSES * CALLS * 4);
    expect(acknowledged.filter((id) => !byId.has(id))).toEqual([]);
    const calls = nodes.filter((node) => node.caller === null);
    expect(calls).toHaveLength(PROCESSES * CALLS);
    // The processes raced: in seq order, the calls change hands more often than one process after another would.
    const processOf = new Map(results.flatMap((result, index) => result.acknowledged.map((id) => [id, index] as const)));
    const owners = [...calls].sort((a, b) => a.seq - b.seq).map((call) => processOf.get(call.id));
    const handovers = owners.filter((owner, index) => index > 0 && owner !== owners[index - 1]).length;
    expect(handovers).toBeGreaterThan(PROCESSES - 1);
    expect(calls.every((call) => call.name === "Chat.say" && call.metadata["status"] === "completed")).toBe(true);
    for (const node of nodes) {
      if (node.caller !== null) expect(byId.has(node.caller)).toBe(true);
      if (node.predecessor !== null) expect(byId.has(node.predecessor)).toBe(true);
    }
    // Each call holds its own requests and tool call.
    const inside = new Map<string, number>();
    for (const node of nodes) if (node.caller !== null) inside.set(node.caller, (inside.get(node.caller) ?? 0) + 1);
    expect(calls.every((call) => (inside.get(call.id) ?? 0) >= 3)).toBe(true);
  } finally {
    store.close();
  }
}, 120_000);
