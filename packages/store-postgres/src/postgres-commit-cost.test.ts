/**
 * A commit costs what it writes, not what the session holds: the rows a
 * commit reads stay flat as a session grows (issue 10's recording cost; a
 * commit used to join its updates against every node of the session, so a
 * turn slowed from 1.5 ms to 5 ms over 3,000 turns). Counted with
 * PostgreSQL's own statistics (rows and index entries read), not timed —
 * whenever the table's statistics were taken.
 */
import { Client } from "pg";
import type { SessionNode, SessionWriteOperation } from "@rein/session";
import { PostgresSessionStore } from "./postgres-session-store";
import { freshSchemaName, startEmbeddedPostgres, type EmbeddedPostgresServer } from "./__fixtures__/embedded-postgres";

let server: EmbeddedPostgresServer | undefined;
beforeAll(async () => {
  server = await startEmbeddedPostgres();
}, 60_000);
afterAll(async () => {
  await server?.stop();
});

/** Rows and index entries of `<schema>.nodes` read so far by every backend (statistics are flushed when a backend exits). */
async function rowsRead(schema: string): Promise<number> {
  const client = new Client({ connectionString: server!.connectionString });
  await client.connect();
  try {
    // Statistics of ended backends arrive shortly after they exit.
    await new Promise((resolve) => setTimeout(resolve, 200));
    await client.query("SELECT pg_stat_clear_snapshot()");
    const { rows } = await client.query<{ read: string }>(
      "SELECT (SELECT coalesce(sum(idx_tup_read), 0) FROM pg_stat_user_indexes WHERE schemaname = $1 AND relname = 'nodes') + " +
        "(SELECT coalesce(sum(seq_tup_read), 0) FROM pg_stat_user_tables WHERE schemaname = $1 AND relname = 'nodes') AS read",
      [schema],
    );
    return Number(rows[0]?.read ?? 0);
  } finally {
    await client.end();
  }
}

/** `ANALYZE` of the schema's nodes table, from a connection of its own. */
async function analyze(schema: string): Promise<void> {
  const client = new Client({ connectionString: server!.connectionString });
  await client.connect();
  try {
    await client.query(`ANALYZE "${schema}".nodes`);
  } finally {
    await client.end();
  }
}

const node = (id: string, seq: number, fields: Partial<SessionNode> = {}): SessionNode => ({
  id,
  seq,
  createdAt: 1,
  role: "code",
  name: "A.run",
  input: null,
  output: null,
  caller: null,
  predecessor: null,
  metadata: { status: "completed" },
  ...fields,
});

it("a session grown by 400 turns (an 8-node commit and an update each) reads a bounded number of rows per commit", async () => {
  const schema = freshSchemaName();
  const store = new PostgresSessionStore({ connectionString: server!.connectionString, schema, shutdownFlush: false });
  store.createSession("grown");
  let seq = 0;
  let previous: string | null = null;
  const before = await rowsRead(schema);
  for (let turn = 0; turn < 400; turn++) {
    const call = `c${turn}`;
    const operations: SessionWriteOperation[] = [{ kind: "append", node: node(call, seq++, { predecessor: previous, metadata: { status: "running" } }) }];
    for (let index = 0; index < 7; index++) {
      operations.push({ kind: "append", node: node(`${call}.${index}`, seq++, { caller: call, predecessor: index === 0 ? null : `${call}.${index - 1}` }) });
    }
    store.commit("grown", operations);
    store.commit("grown", [{ kind: "update", id: call, fields: { metadata: { status: "completed" } } }]);
    previous = call;
    // Statistics taken while the session is small, as autovacuum may take them at any moment: they must not turn
    // a commit's key lookups into scans of the table (they did: 12,428 rows read with these two, 28,981 in a loaded run).
    if (turn === 3 || turn === 30) await analyze(schema);
  }
  store.close();
  const read = (await rowsRead(schema)) - before;
  // 800 commits of a few rows each, found by their keys: about 1,200 entries read in all (2026-12-03). Joining the
  // session would read ~8 x turn rows per commit (over 600,000); scanning it after early statistics, over 12,000.
  expect(read).toBeLessThan(4_000);
}, 60_000);
