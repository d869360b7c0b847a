/**
 * Faults of PostgresSessionStore against a real server: each is a typed
 * error whose message says what to do, and the same store works again
 * once the cause is gone.
 */
import { createServer } from "node:net";
import { Client, Pool } from "pg";
import { SessionNodeConflictError, SessionSchemaVersionError, SessionStoreBusyError, SessionStoreClosedError, type SessionWriteOperation } from "@rein/session";
import { PostgresSessionStore } from "./postgres-session-store";
import { PostgresAuthenticationError, PostgresConnectionError, PostgresForeignSchemaError, PostgresSchemaVersionError } from "./postgres-errors";
import { freshSchemaName, startEmbeddedPostgres, type EmbeddedPostgresServer } from "./__fixtures__/embedded-postgres";
import { startStaleConnectionProxy } from "./__fixtures__/stale-connection-proxy";

let server: EmbeddedPostgresServer | undefined;
let admin: Client | undefined;
beforeAll(async () => {
  server = await startEmbeddedPostgres();
  admin = new Client({ connectionString: server.connectionString });
  await admin.connect();
}, 60_000);
afterAll(async () => {
  await admin?.end().catch(() => undefined);
  await server?.stop();
});

const open = (options: { schema?: string; busyTimeoutMs?: number; application?: string } = {}): PostgresSessionStore =>
  new PostgresSessionStore({
    pool: {
      host: "127.0.0.1",
      port: server!.port,
      user: server!.user,
      password: server!.password,
      database: server!.database,
      ...(options.application === undefined ? {} : { application_name: options.application }),
    },
    schema: options.schema ?? freshSchemaName(),
    shutdownFlush: false,
    ...(options.busyTimeoutMs === undefined ? {} : { busyTimeoutMs: options.busyTimeoutMs }),
  });

function thrown(call: () => unknown): unknown {
  try {
    call();
  } catch (error) {
    return error;
  }
  throw new Error("expected a throw");
}

const append = (id: string, caller: string | null = null, predecessor: string | null = null): SessionWriteOperation => ({
  kind: "append",
  node: { id, seq: 0, createdAt: 1, role: "code", name: "A.run", input: { id }, output: undefined, caller, predecessor, metadata: {} },
});

function closedPort(): Promise<number> {
  return new Promise((resolve) => {
    const probe = createServer().listen(0, "127.0.0.1", () => {
      const { port } = probe.address() as { port: number };
      probe.close(() => resolve(port));
    });
  });
}

describe("options", () => {
  it("are checked at construction, each problem a TypeError naming the option", () => {
    expect(() => new PostgresSessionStore({ connectionString: "postgres://x/y", pool: {} })).toThrow(/cannot provide both connectionString and pool/);
    expect(() => new PostgresSessionStore({ schema: "bad-name" })).toThrow(/option 'schema' must be a PostgreSQL identifier/);
    expect(() => new PostgresSessionStore({ connectionString: "" })).toThrow(/option 'connectionString' must be a non-empty string/);
    expect(() => new PostgresSessionStore({ busyTimeoutMs: -1 })).toThrow(/option 'busyTimeoutMs' must be a positive number/);
    expect(() => new PostgresSessionStore({ shutdownFlush: "yes" as never })).toThrow(/option 'shutdownFlush' must be true or false/);
    expect(() => new PostgresSessionStore({ connection: "x" } as never)).toThrow(/unknown option 'connection'/);
    expect(() => new PostgresSessionStore({ pool: { password: () => "secret" } as never })).toThrow(/option 'pool.password' must be plain data/);
    const pool = new Pool();
    expect(() => new PostgresSessionStore({ pool: pool as never })).toThrow(/not a pg.Pool or pg.Client: the store's connection lives in a worker thread/);
    void pool.end();
    for (const call of [() => new PostgresSessionStore({ schema: "1x" }), () => new PostgresSessionStore({ pool: 5 as never })]) {
      expect(thrown(call)).toBeInstanceOf(TypeError);
    }
  });

  it("location names host, port, database and schema, never the password", () => {
    const store = new PostgresSessionStore({ connectionString: server!.connectionString, schema: freshSchemaName(), shutdownFlush: false });
    try {
      expect(store.location).toBe(`postgres://127.0.0.1:${server!.port}/${server!.database} (schema ${store.schema})`);
      expect(store.location).not.toContain(server!.password);
    } finally {
      store.close();
    }
  });
});

describe("connection faults", () => {
  it("an unreachable server (closed port) is a PostgresConnectionError saying what to check", async () => {
    const port = await closedPort();
    const error = thrown(() => new PostgresSessionStore({ connectionString: `postgres://u:secret@127.0.0.1:${port}/db`, shutdownFlush: false }));
    expect(PostgresConnectionError.isInstance(error)).toBe(true);
    expect((error as PostgresConnectionError).code).toBe("ECONNREFUSED");
    expect((error as Error).message).toMatch(/Cannot reach PostgreSQL for session store 'postgres:\/\/127\.0\.0\.1:\d+\/db \(schema rein\)'.*Check that the server is running/);
    expect((error as Error).message).not.toContain("secret");
  });

  it("a wrong password is a PostgresAuthenticationError naming the credentials to check", () => {
    const error = thrown(
      () => new PostgresSessionStore({ connectionString: `postgres://${server!.user}:wrong@127.0.0.1:${server!.port}/${server!.database}`, shutdownFlush: false }),
    );
    expect(PostgresAuthenticationError.isInstance(error)).toBe(true);
    expect((error as PostgresAuthenticationError).code).toBe("28P01");
    expect((error as Error).message).toMatch(/refused the credentials.*check the user and password/);
  });

  it("a missing database says to create it", () => {
    const error = thrown(() => new PostgresSessionStore({ connectionString: `postgres://${server!.user}:${server!.password}@127.0.0.1:${server!.port}/nowhere`, shutdownFlush: false }));
    expect(PostgresConnectionError.isInstance(error)).toBe(true);
    expect((error as Error).message).toMatch(/does not exist.*CREATE DATABASE/);
  });

  it("after the server ends the store's connection (pg_terminate_backend), the next call works, at once", async () => {
    const store = open({ application: "rein-terminated" });
    try {
      store.createSession("s");
      store.commit("s", [append("a")]);
      const terminated = await admin!.query("SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE application_name = 'rein-terminated'");
      expect(terminated.rowCount).toBe(1);
      // Whether or not the store has heard of the end yet: a BEGIN on the ended connection is sent again on a new one.
      store.commit("s", [append("b", null, "a")]);
      store.commit("s", [append("c", null, "b")]);
      expect(store.readNodes("s").map((node) => node.id)).toEqual(["a", "b", "c"]);
    } finally {
      store.close();
    }
  });

  it("connections gone stale while idle (the server restarted, the client not told) are replaced: the next call succeeds, on the store's own connection and on its pool", async () => {
    // Every connection goes through a proxy that can end the server side of those open, unknown to the client.
    const proxy = await startStaleConnectionProxy(server!.port);
    const store = new PostgresSessionStore({
      pool: { host: "127.0.0.1", port: proxy.port, user: server!.user, password: server!.password, database: server!.database },
      schema: freshSchemaName(),
      shutdownFlush: false,
      asyncWrites: { poolSize: 2 },
    });
    try {
      store.createSession("s");
      store.commit("s", [append("a")]);
      await store.commitAsync!("s", [append("b", null, "a")]);
      // The store's own connection and the pool's, idle now.
      expect(await proxy.staleAll()).toBeGreaterThanOrEqual(2);
      store.commit("s", [append("c", null, "b")]);
      await store.commitAsync!("s", [append("d", null, "c")]);
      await proxy.staleAll();
      // A pooled read in a transaction (readNodes), and a single pooled statement (readAncestry).
      expect((await store.asyncReads!.readNodes("s")).map((node) => node.id)).toEqual(["a", "b", "c", "d"]);
      await proxy.staleAll();
      expect((await store.asyncReads!.readAncestry("s", "d")).map((node) => node.id)).toEqual(["a", "b", "c", "d"]);
      await proxy.staleAll();
      expect(store.readNodes("s")).toHaveLength(4);
    } finally {
      store.close();
      await proxy.close();
    }
  });

  it("a connection lost in the middle of a commit leaves nothing half-written, and the store goes on", async () => {
    const store = open({ application: "rein-mid-commit", busyTimeoutMs: 5000 });
    const blocker = new Client({ connectionString: server!.connectionString });
    await blocker.connect();
    try {
      store.createSession("s");
      // Hold the session row, so the store's commit waits inside its transaction; end its connection meanwhile.
      await blocker.query("BEGIN");
      await blocker.query(`SELECT 1 FROM "${store.schema}".sessions WHERE id = 's' FOR UPDATE`);
      const pending = store.commitWithRetry("s", [append("x"), append("y", "x")]).then(
        () => "committed",
        (error: unknown) => (error as Error).name,
      );
      await new Promise((resolve) => setTimeout(resolve, 100));
      await admin!.query("SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE application_name = 'rein-mid-commit'");
      await blocker.query("ROLLBACK");
      // commitWithRetry reconnects and commits the batch once, whole.
      await expect(pending).resolves.toBe("committed");
      expect(store.readNodes("s").map((node) => node.id)).toEqual(["x", "y"]);
      expect(store.getSession("s")).toMatchObject({ nodeCount: 2, lastSeq: 1, headId: "x" });
    } finally {
      await blocker.end();
      store.close();
    }
  });
});

describe("locks and failed transactions", () => {
  it("a session row locked elsewhere past busyTimeoutMs is a SessionStoreBusyError; nothing was written and the store goes on", async () => {
    const store = open({ busyTimeoutMs: 200 });
    const blocker = new Client({ connectionString: server!.connectionString });
    await blocker.connect();
    try {
      store.createSession("s");
      await blocker.query("BEGIN");
      await blocker.query(`SELECT 1 FROM "${store.schema}".sessions WHERE id = 's' FOR UPDATE`);
      const error = thrown(() => store.commit("s", [append("a")]));
      expect(SessionStoreBusyError.isInstance(error)).toBe(true);
      expect((error as Error).message).toMatch(/is locked by another connection.*Nothing was written; retry later/);
      await blocker.query("ROLLBACK");
      expect(store.readNodes("s")).toEqual([]);
      store.commit("s", [append("a")]);
      expect(store.readNodes("s").map((node) => node.id)).toEqual(["a"]);
    } finally {
      await blocker.end();
      store.close();
    }
  });

  it("commitWithRetry waits out a lock without blocking the event loop", async () => {
    const store = open({ busyTimeoutMs: 3000 });
    const blocker = new Client({ connectionString: server!.connectionString });
    await blocker.connect();
    try {
      store.createSession("s");
      await blocker.query("BEGIN");
      await blocker.query(`SELECT 1 FROM "${store.schema}".sessions WHERE id = 's' FOR UPDATE`);
      let ticks = 0;
      const ticker = setInterval(() => ticks++, 10);
      const committed = store.commitWithRetry("s", [append("a")]);
      setTimeout(() => void blocker.query("ROLLBACK"), 300);
      const { seqs } = await committed;
      clearInterval(ticker);
      expect([...seqs]).toEqual([["a", 0]]);
      expect(ticks).toBeGreaterThan(10);
    } finally {
      await blocker.end();
      store.close();
    }
  });

  it("a commit that fails (id conflict) is rolled back whole; the next commit works", () => {
    const store = open();
    try {
      store.createSession("s");
      store.commit("s", [append("a")]);
      const original = append("a") as Extract<SessionWriteOperation, { kind: "append" }>;
      const conflicting: SessionWriteOperation = { kind: "append", node: { ...original.node, name: "B.other" } };
      expect(() => store.commit("s", [append("b"), conflicting])).toThrow(SessionNodeConflictError);
      expect(store.getSession("s")).toMatchObject({ nodeCount: 1, lastSeq: 0, headId: "a" });
      store.commit("s", [append("b", null, "a")]);
      expect(store.readNodes("s").map((node) => [node.id, node.seq])).toEqual([
        ["a", 0],
        ["b", 1],
      ]);
    } finally {
      store.close();
    }
  });
});

describe("schema", () => {
  it("creates the schema and records its version; a newer version is refused untouched with a typed error", async () => {
    const schema = freshSchemaName();
    open({ schema }).close();
    const versions = await admin!.query(`SELECT version FROM "${schema}".rein_schema ORDER BY version`);
    expect(versions.rows).toEqual([{ version: 1 }, { version: 2 }, { version: 3 }, { version: 4 }]);
    await admin!.query(`INSERT INTO "${schema}".rein_schema (version, name, applied_at) VALUES (7, 'from the future', 0)`);
    const error = thrown(() => open({ schema }));
    expect(PostgresSchemaVersionError.isInstance(error)).toBe(true);
    expect(SessionSchemaVersionError.isInstance(error)).toBe(true);
    expect(error).toMatchObject({ foundVersion: 7, supportedVersion: 4 });
    expect((error as Error).message).toMatch(/has schema version 7, newer than version 4 supported by this @rein\/store-postgres.*upgrade @rein\/store-postgres/);
    expect((await admin!.query(`SELECT count(*)::int AS n FROM "${schema}".rein_schema`)).rows).toEqual([{ n: 5 }]);
  });

  it("a schema holding tables Rein did not create is refused untouched", async () => {
    const schema = freshSchemaName();
    await admin!.query(`CREATE SCHEMA "${schema}"; CREATE TABLE "${schema}".sessions (user_id int)`);
    const error = thrown(() => open({ schema }));
    expect(PostgresForeignSchemaError.isInstance(error)).toBe(true);
    expect((error as PostgresForeignSchemaError).tables).toEqual(["sessions"]);
    const tables = await admin!.query("SELECT table_name FROM information_schema.tables WHERE table_schema = $1", [schema]);
    expect(tables.rows).toEqual([{ table_name: "sessions" }]);
  });
});

describe("close", () => {
  it("ends the connection at once, is idempotent, and a closed store throws SessionStoreClosedError", async () => {
    const store = open({ application: "rein-closing" });
    store.createSession("s");
    const before = await admin!.query("SELECT count(*)::int AS n FROM pg_stat_activity WHERE application_name = 'rein-closing'");
    expect(before.rows).toEqual([{ n: 1 }]);
    store.close();
    const after = await admin!.query("SELECT count(*)::int AS n FROM pg_stat_activity WHERE application_name = 'rein-closing'");
    expect(after.rows).toEqual([{ n: 0 }]);
    expect(() => store.close()).not.toThrow();
    expect(() => store.getSession("s")).toThrow(SessionStoreClosedError);
    await expect(store.commitWithRetry("s", [append("a")])).rejects.toThrow(SessionStoreClosedError);
  });
});
