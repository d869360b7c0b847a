/**
 * Crash recovery across processes: each store holds a session-level
 * advisory lock on its owner id while its connection lives. A store that
 * opens (or calls interruptAbandoned) marks `interrupted` the running nodes
 * of owners whose lock it can take — gone — and leaves alone those of
 * stores still connected.
 */
import { spawn } from "node:child_process";
import { join } from "node:path";
import { Client } from "pg";
import type { SessionWriteOperation } from "@rein/session";
import { PostgresSessionStore } from "./postgres-session-store";
import { PostgresConnectionError } from "./postgres-errors";
import { freshSchemaName, startEmbeddedPostgres, type EmbeddedPostgresServer } from "./__fixtures__/embedded-postgres";

const ROOT = join(__dirname, "..", "..", "..");

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

/** The connection string, naming the connections it makes (to find them in pg_stat_activity). */
const named = (application: string): string => `${server!.connectionString}?application_name=${application}`;

const open = (schema: string, application = "rein-session-store"): PostgresSessionStore =>
  new PostgresSessionStore({ connectionString: named(application), schema, shutdownFlush: false });

/** Waits until the server has ended every backend of `application` (a killed client's backend ends when the server notices). */
async function backendsGone(application: string): Promise<void> {
  for (const deadline = Date.now() + 10_000; Date.now() < deadline; ) {
    const { rows } = await admin!.query<{ n: number }>("SELECT count(*)::int AS n FROM pg_stat_activity WHERE application_name = $1", [application]);
    if (rows[0]!.n === 0) return;
    await new Promise((done) => setTimeout(done, 20));
  }
  throw new Error(`the backends of ${application} did not end`);
}

const running = (id: string): SessionWriteOperation => ({
  kind: "append",
  node: { id, seq: 0, createdAt: 1, role: "code", name: "A.run", input: { id }, output: undefined, caller: null, predecessor: null, metadata: { status: "running" } },
});

const statusOf = (store: PostgresSessionStore, sessionId: string, nodeId: string): unknown =>
  store.readNodes(sessionId).find((node) => node.id === nodeId)?.metadata["status"];

test("a process killed with SIGKILL mid-run loses no committed node; a store opened after marks its running nodes interrupted", async () => {
  const schema = freshSchemaName();
  const child = spawn(
    process.execPath,
    ["--require", require.resolve("tsx/cjs"), join(__dirname, "__fixtures__", "crash-child.ts"), named("rein-crash-child"), schema],
    { cwd: ROOT, env: { ...process.env, TSX_TSCONFIG_PATH: join(ROOT, "tsconfig.test.json") }, stdio: ["ignore", "pipe", "pipe"] },
  );
  const lines: string[] = [];
  let stderr = "";
  child.stderr.on("data", (chunk: Buffer) => (stderr += chunk.toString()));
  await new Promise<void>((done, fail) => {
    child.stdout.on("data", (chunk: Buffer) => {
      lines.push(...chunk.toString().split("\n").filter(Boolean));
      if (lines.includes("hanging") && lines.filter((line) => line.startsWith("committed ")).length >= 4) done();
    });
    child.once("exit", () => fail(new Error(`child exited early: ${stderr}`)));
  });

  // While the child lives, a store opening on its schema (another process, as far as the server knows) leaves its nodes running.
  const watcher = open(schema);
  try {
    expect(statusOf(watcher, "crawl", watcher.readNodes("crawl").find((node) => node.name === "Crawler.crawl")!.id)).toBe("running");
    expect(watcher.interruptAbandoned()).toBe(0);

    child.kill("SIGKILL");
    await new Promise((done) => child.once("exit", done));
    await backendsGone("rein-crash-child");

    const committed = lines.filter((line) => line.startsWith("committed ")).map((line) => line.slice(10));
    expect(committed.length).toBeGreaterThanOrEqual(4);
    const reopened = open(schema);
    try {
      const nodes = reopened.readNodes("crawl");
      const ids = new Set(nodes.map((node) => node.id));
      for (const id of committed) expect(ids.has(id)).toBe(true);
      expect(nodes.find((node) => node.name === "Crawler.crawl")!.metadata["status"]).toBe("interrupted");
      expect(nodes.filter((node) => node.name === "Crawler.fetch_page").at(-1)!.metadata["status"]).toBe("interrupted");
      expect(nodes.some((node) => node.metadata["status"] === "running")).toBe(false);
      // The status column (what the recovery query selects on) follows metadata.status.
      const { rows } = await admin!.query(`SELECT count(*)::int AS n FROM "${schema}".nodes WHERE status = 'running'`);
      expect(rows[0].n).toBe(0);
      // Done once: the watcher's sweep finds nothing left.
      expect(watcher.interruptAbandoned()).toBe(0);
    } finally {
      reopened.close();
    }
  } finally {
    watcher.close();
    if (child.exitCode === null && child.signalCode === null) child.kill("SIGKILL");
  }
}, 60_000);

test("two stores open at once: neither's open or sweep touches the other's running nodes", () => {
  const schema = freshSchemaName();
  const one = open(schema);
  try {
    one.createSession("s");
    one.commit("s", [running("one-node")]);
    const two = open(schema);
    try {
      expect(statusOf(two, "s", "one-node")).toBe("running");
      two.commit("s", [running("two-node")]);
      expect(two.interruptAbandoned()).toBe(0);
      expect(one.interruptAbandoned()).toBe(0);
      expect(statusOf(one, "s", "one-node")).toBe("running");
      expect(statusOf(one, "s", "two-node")).toBe("running");
    } finally {
      // A clean close interrupts the closing store's own nodes only.
      two.close();
    }
    expect(statusOf(one, "s", "two-node")).toBe("interrupted");
    expect(statusOf(one, "s", "one-node")).toBe("running");
  } finally {
    one.close();
  }
});

test("a store whose connection was lost counts as gone until it reconnects, and takes its lock again when it does", async () => {
  const schema = freshSchemaName();
  const lost = open(schema, "rein-lock-lost");
  const other = open(schema);
  try {
    lost.createSession("s");
    lost.commit("s", [running("before")]);
    await admin!.query("SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE application_name = 'rein-lock-lost'");
    await backendsGone("rein-lock-lost");
    expect(other.interruptAbandoned()).toBe(1);
    expect(statusOf(other, "s", "before")).toBe("interrupted");

    // The next call reconnects (or fails typed once, then does) and takes the lock again.
    try {
      lost.hasSession("s");
    } catch (error) {
      expect(PostgresConnectionError.isInstance(error)).toBe(true);
    }
    lost.commit("s", [running("after")]);
    expect(other.interruptAbandoned()).toBe(0);
    expect(statusOf(other, "s", "after")).toBe("running");
  } finally {
    lost.close();
    other.close();
  }
});

test("a lock not free when the store reconnects (held elsewhere past busyTimeoutMs) is taken by a later call", async () => {
  const schema = freshSchemaName();
  const lost = new PostgresSessionStore({ connectionString: named("rein-lock-busy"), schema, shutdownFlush: false, busyTimeoutMs: 200 });
  const other = open(schema);
  const holder = new Client({ connectionString: server!.connectionString });
  await holder.connect();
  try {
    lost.createSession("s");
    lost.commit("s", [running("first")]);
    const { rows } = await admin!.query(`SELECT owner FROM "${schema}".nodes WHERE id = 'first'`);
    const key = "hashtextextended('rein-session-store-owner:' || $1::text, 0)";
    await admin!.query("SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE application_name = 'rein-lock-busy'");
    await backendsGone("rein-lock-busy");
    await holder.query(`SELECT pg_advisory_lock(${key})`, [rows[0].owner]);
    try {
      lost.hasSession("s");
    } catch (error) {
      expect(PostgresConnectionError.isInstance(error)).toBe(true);
    }
    // Reconnected without its lock (it waited 200 ms): the store works on.
    expect(lost.hasSession("s")).toBe(true);
    await holder.query(`SELECT pg_advisory_unlock(${key})`, [rows[0].owner]);
    lost.commit("s", [running("second")]);
    expect(other.interruptAbandoned()).toBe(0);
    expect(statusOf(other, "s", "second")).toBe("running");
  } finally {
    await holder.end();
    lost.close();
    other.close();
  }
});
