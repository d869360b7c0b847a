import { describeSessionStoreContract } from "@rein/session";
import { HOST_KEPT_FOR_MS, postgresHostThreadId } from "./postgres-connection";
import { PostgresSessionStore } from "./postgres-session-store";
import { freshSchemaName, startEmbeddedPostgres, type EmbeddedPostgresServer } from "./__fixtures__/embedded-postgres";

let server: EmbeddedPostgresServer | undefined;
beforeAll(async () => {
  server = await startEmbeddedPostgres();
}, 60_000);
afterAll(async () => {
  await server?.stop();
});

describeSessionStoreContract("PostgresSessionStore", () => new PostgresSessionStore({ connectionString: server!.connectionString, schema: freshSchemaName(), shutdownFlush: false }));

describe("stores of one process share one worker thread", () => {
  it("each store has its own connection: closing one leaves the others working, and a store opened later works too", async () => {
    const schema = freshSchemaName();
    const open = (): PostgresSessionStore => new PostgresSessionStore({ connectionString: server!.connectionString, schema, shutdownFlush: false });
    const [a, b] = [open(), open()];
    a.createSession("from-a");
    a.close();
    expect(() => a.hasSession("from-a")).toThrow(/closed/);
    expect(b.hasSession("from-a")).toBe(true);
    b.createSession("from-b");
    const c = open();
    try {
      expect(c.listSessions().map((session) => session.id).sort()).toEqual(["from-a", "from-b"]);
      // An asynchronous commit on one store settles while another store answers synchronously.
      const committing = c.commitWithRetry("from-b", [
        { kind: "append", node: { id: "n1", seq: 0, createdAt: 1, role: "user", name: "user", input: "hi", output: null, caller: null, predecessor: null, metadata: {} } },
      ]);
      expect(b.getSession("from-a").nodeCount).toBe(0);
      await committing;
      expect(b.head("from-b")).toBe("n1");
    } finally {
      b.close();
      c.close();
    }
  });

  it("the thread stays for a store opened within HOST_KEPT_FOR_MS of the last one closing, and ends after that with no store open", async () => {
    const schema = freshSchemaName();
    const open = (): PostgresSessionStore => new PostgresSessionStore({ connectionString: server!.connectionString, schema, shutdownFlush: false });
    const first = open();
    first.createSession("kept");
    const thread = postgresHostThreadId();
    expect(thread).toBeDefined();
    first.close();
    const second = open();
    expect(second.hasSession("kept")).toBe(true);
    expect(postgresHostThreadId()).toBe(thread);
    second.close();
    await new Promise((resolve) => setTimeout(resolve, HOST_KEPT_FOR_MS + 500));
    // No store open for the whole keep period: no thread (nor pg loaded in one) left behind.
    expect(postgresHostThreadId()).toBeUndefined();
    const third = open();
    try {
      expect(third.hasSession("kept")).toBe(true);
      expect(postgresHostThreadId()).toBeDefined();
      expect(postgresHostThreadId()).not.toBe(thread);
    } finally {
      third.close();
    }
  }, 60_000);
});
