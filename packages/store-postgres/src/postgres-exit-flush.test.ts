/**
 * On the asynchronous write path (`asyncWrites`), a process that exits —
 * `process.exit()` or SIGTERM — keeps what it wrote: the shutdown flush
 * commits on the synchronous path both the commit still in flight on the
 * pool (abandoned: its connection is closed, so the server rolls it back)
 * and the writes queued behind it, in the order written. (Before, the
 * flush only started another asynchronous commit, which never ran: the
 * process exited and every one of those writes was lost.)
 */
import { spawn, type ChildProcessWithoutNullStreams } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Client } from "pg";
import { compileScript, type CompiledScript } from "../../session/src/__fixtures__/compiled-script";
import { PostgresSessionStore } from "./postgres-session-store";
import { freshSchemaName, startEmbeddedPostgres, type EmbeddedPostgresServer } from "./__fixtures__/embedded-postgres";

const ROOT = join(__dirname, "..", "..", "..");
let server: EmbeddedPostgresServer | undefined;
let scratch: string;
let compiled: CompiledScript;
beforeAll(async () => {
  scratch = mkdtempSync(join(tmpdir(), "rein-exit-flush-"));
  compiled = compileScript(join(__dirname, "__fixtures__", "exit-flush-child.ts"), scratch);
  server = await startEmbeddedPostgres();
}, 300_000);
afterAll(async () => {
  await server?.stop();
  rmSync(scratch, { recursive: true, force: true });
});

/** Resolves once `child` printed `line`; rejects when it exits first. */
function printed(child: ChildProcessWithoutNullStreams, line: string, errors: () => string): Promise<void> {
  return new Promise((resolve, reject) => {
    let output = "";
    child.stdout.on("data", (chunk: Buffer) => {
      output += chunk.toString();
      if (output.split("\n").includes(line)) resolve();
    });
    child.once("exit", (code) => reject(new Error(`child exited ${code} before printing ${line}: ${errors()}`)));
  });
}

/** How many connections to this database wait for a lock (the child's commits, on the session row). */
async function waiting(admin: Client): Promise<number> {
  const { rows } = await admin.query<{ n: number }>(
    "SELECT count(*)::int AS n FROM pg_stat_activity WHERE wait_event_type = 'Lock' AND datname = current_database()",
  );
  return rows[0]!.n;
}

const sleep = (ms: number) => new Promise((done) => setTimeout(done, ms));

for (const mode of ["exit", "signal"] as const) {
  test(`${mode === "exit" ? "process.exit()" : "SIGTERM"} with a commit in flight and writes queued behind it: every write is stored, in order`, async () => {
    const schema = freshSchemaName();
    const setup = new PostgresSessionStore({ connectionString: server!.connectionString, schema, shutdownFlush: false });
    setup.createSession("exiting");
    setup.close();
    // Holds the session row's lock, so the child's first commit stays in flight.
    const holder = new Client({ connectionString: server!.connectionString });
    await holder.connect();
    await holder.query("BEGIN");
    await holder.query(`SELECT 1 FROM "${schema}".sessions WHERE id = 'exiting' FOR UPDATE`);
    const admin = new Client({ connectionString: server!.connectionString });
    await admin.connect();
    const child = spawn(process.execPath, [...compiled.nodeArgs, server!.connectionString, schema, mode], {
      cwd: ROOT,
      env: { ...process.env, ...compiled.env },
    });
    let errors = "";
    child.stderr.on("data", (chunk: Buffer) => (errors += chunk.toString()));
    const exited = new Promise<void>((done) => child.once("exit", () => done()));
    let gone = false;
    void exited.then(() => (gone = true));
    try {
      await printed(child, "queued", () => errors);
      // The first commit is in flight: it waits for the lock.
      for (let tries = 0; (await waiting(admin)) < 1; tries++) {
        expect(tries).toBeLessThan(600);
        await sleep(50);
      }
      if (mode === "exit") child.stdin.write("exit\n");
      else child.kill("SIGTERM");
      // The exiting child commits on its synchronous path: a second waiter (or, had it dropped the writes, gone).
      for (let tries = 0; !gone && (await waiting(admin)) < 2; tries++) {
        expect(tries).toBeLessThan(600);
        await sleep(50);
      }
      await holder.query("ROLLBACK");
      await exited;
      const reader = new PostgresSessionStore({ connectionString: server!.connectionString, schema, shutdownFlush: false });
      try {
        const ids = reader.readNodes("exiting").map((node) => node.id);
        const written = [...Array.from({ length: 10 }, (_, i) => `first-${i}`), ...Array.from({ length: 10 }, (_, i) => `later-${i}`)];
        expect(ids).toEqual(written);
        expect(reader.head("exiting")).toBe("later-9");
      } finally {
        reader.close();
      }
      expect(errors).toBe("");
    } finally {
      if (!gone) child.kill("SIGKILL");
      await holder.end().catch(() => undefined);
      await admin.end();
    }
  }, 120_000);
}
