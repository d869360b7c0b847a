/**
 * The test fixture that gives every test file of a jest run a database of its
 * own on one shared embedded PostgreSQL server (__fixtures__/shared-postgres.ts,
 * docs/testing.md): files are as isolated as they were with a server each.
 */
import { Client } from "pg";
import { startEmbeddedPostgres, type EmbeddedPostgresServer } from "./__fixtures__/embedded-postgres";

async function query(connectionString: string, sql: string): Promise<unknown[]> {
  const client = new Client({ connectionString });
  await client.connect();
  try {
    return (await client.query(sql)).rows;
  } finally {
    await client.end();
  }
}

const opened: EmbeddedPostgresServer[] = [];
afterAll(async () => {
  for (const database of opened) await database.stop();
});

describe("startEmbeddedPostgres under pnpm test", () => {
  it("runs inside a jest run that set REIN_TEST_RUN_DIR (jest.global-setup.js)", () => {
    expect(process.env["REIN_TEST_RUN_DIR"]).toEqual(expect.any(String));
    expect(Number(process.env["REIN_TEST_RUN_PID"])).toBeGreaterThan(0);
  });

  it("two callers get two databases on one server: a table made in one is not seen in the other; stop() drops only its own", async () => {
    const first = await startEmbeddedPostgres();
    opened.push(first);
    const second = await startEmbeddedPostgres();
    opened.push(second);
    expect(second.port).toBe(first.port);
    expect(second.database).not.toBe(first.database);
    expect(first.connectionString.endsWith(`/${first.database}`)).toBe(true);

    await query(first.connectionString, "CREATE TABLE only_here (n int); INSERT INTO only_here VALUES (1)");
    expect(await query(first.connectionString, "SELECT n FROM only_here")).toEqual([{ n: 1 }]);
    await expect(query(second.connectionString, "SELECT n FROM only_here")).rejects.toThrow(/relation "only_here" does not exist/);

    await first.stop();
    await expect(query(first.connectionString, "SELECT 1")).rejects.toThrow(/database "rein_test_[0-9a-f]+" does not exist/);
    // The other file's database, and the server, are still there.
    expect(await query(second.connectionString, "SELECT 1 AS one")).toEqual([{ one: 1 }]);
  }, 300_000); // the first caller of a run starts the server (initdb): minutes at a load of 20 on two cores

  it("a database dropped while a connection is still open on it ends that connection, as stopping a server of its own did", async () => {
    const database = await startEmbeddedPostgres();
    opened.push(database);
    const client = new Client({ connectionString: database.connectionString });
    // Every error is listened to: the termination, then the socket closing.
    const ended = new Promise<Error>((resolve) => client.on("error", resolve));
    await client.connect();
    await database.stop();
    expect((await ended).message).toMatch(/terminat/i);
    await client.end().catch(() => undefined);
  }, 300_000);
});
