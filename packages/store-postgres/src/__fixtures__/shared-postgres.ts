/**
 * One embedded PostgreSQL server for a whole jest run, a fresh database on it
 * for each test file.
 *
 * Starting a server (initdb, start, stop) costs about 5 s of CPU and, on a
 * loaded two-core machine, up to a minute of waiting; twenty test files each
 * starting their own made that most of `pnpm test`'s database time. The
 * first file that asks starts the server (detached, so it outlives that file)
 * and records it in the run's directory; every file, that one included, gets
 * a database of its own (`CREATE DATABASE`, a few milliseconds), so files see
 * no schema, table or row of another, as they did with a server each. jest's
 * global teardown (jest.global-teardown.js) stops the server; if jest is
 * killed first, the server notices its owner is gone and stops by itself.
 *
 * The run's directory is `REIN_TEST_RUN_DIR`, made by jest.global-setup.js;
 * without it (a benchmark, a test run some other way) each caller starts a
 * server of its own as before.
 */
import { spawn } from "node:child_process";
import { closeSync, existsSync, mkdirSync, openSync, readFileSync, renameSync, writeFileSync } from "node:fs";
import { randomBytes } from "node:crypto";
import { join } from "node:path";
import { Client } from "pg";

/** A database of its own on the shared server (an `EmbeddedPostgresServer` of embedded-postgres.ts, which imports this file). */
export interface SharedDatabase {
  readonly port: number;
  readonly user: string;
  readonly password: string;
  readonly database: string;
  readonly connectionString: string;
  /** Drops the database. Idempotent. */
  stop(): Promise<void>;
}

/** What the starting file writes to `postgres.json` in the run's directory. */
interface SharedServer {
  readonly port: number;
  readonly user: string;
  readonly password: string;
  readonly pid: number;
}

/** Longest wait for a server another file is starting (initdb at a load of 20 on two cores). */
const WAIT_FOR_SERVER_MS = 300_000;

const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

/** The run's shared server, started here if no file has started it yet. */
async function sharedServer(runDir: string, ownerPid: number): Promise<SharedServer> {
  const recorded = join(runDir, "postgres.json");
  const failed = join(runDir, "postgres.failed");
  let starter = false;
  try {
    mkdirSync(join(runDir, "postgres.lock"));
    starter = true;
  } catch {
    // Another file is starting it (or has): wait for its record below.
  }
  if (starter) {
    const log = join(runDir, "postgres.log");
    const out = openSync(log, "a");
    try {
      const child = spawn(process.execPath, [join(__dirname, "embedded-postgres-server.mjs"), "--owner-pid", String(ownerPid)], {
        detached: true,
        stdio: ["ignore", out, out],
      });
      child.unref();
    } finally {
      closeSync(out);
    }
    const started = Date.now();
    for (;;) {
      const line = readFileSync(log, "utf8").split("\n").find((text) => text.startsWith("{"));
      if (line !== undefined) {
        writeFileSync(`${recorded}.tmp`, line);
        renameSync(`${recorded}.tmp`, recorded);
        return JSON.parse(line) as SharedServer;
      }
      if (/failed to start|exited/.test(readFileSync(log, "utf8")) || Date.now() - started > WAIT_FOR_SERVER_MS) {
        writeFileSync(failed, readFileSync(log, "utf8"));
        throw new Error(`the shared embedded PostgreSQL did not start (log in ${log}):\n${readFileSync(log, "utf8")}`);
      }
      await sleep(100);
    }
  }
  const started = Date.now();
  while (!existsSync(recorded)) {
    if (existsSync(failed)) throw new Error(`the shared embedded PostgreSQL did not start:\n${readFileSync(failed, "utf8")}`);
    if (Date.now() - started > WAIT_FOR_SERVER_MS) throw new Error(`no shared embedded PostgreSQL in ${runDir} after ${WAIT_FOR_SERVER_MS} ms`);
    await sleep(100);
  }
  return JSON.parse(readFileSync(recorded, "utf8")) as SharedServer;
}

/**
 * A fresh database on the run's shared server. `stop()` drops it (ending any
 * connection still open on it, as stopping a server of its own did); the
 * server stays up for the other files.
 */
export async function databaseOnSharedServer(runDir: string, ownerPid: number): Promise<SharedDatabase> {
  const { port, user, password } = await sharedServer(runDir, ownerPid);
  const admin = `postgres://${user}:${password}@127.0.0.1:${port}/postgres`;
  const database = `rein_test_${randomBytes(6).toString("hex")}`;
  const run = async (sql: string): Promise<void> => {
    const client = new Client({ connectionString: admin });
    await client.connect();
    try {
      await client.query(sql);
    } finally {
      await client.end();
    }
  };
  await run(`CREATE DATABASE "${database}" STRATEGY = FILE_COPY`);
  let stopped: Promise<void> | undefined;
  const stop = (): Promise<void> => {
    stopped ??= run(`DROP DATABASE IF EXISTS "${database}" WITH (FORCE)`).catch(() => undefined);
    return stopped;
  };
  return { port, user, password, database, connectionString: `postgres://${user}:${password}@127.0.0.1:${port}/${database}`, stop };
}
