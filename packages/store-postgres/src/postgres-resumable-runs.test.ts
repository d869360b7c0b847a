/**
 * Resumable runs on a shared Postgres store: leases with expiry, and three
 * processes racing to resume 50 runs whose worker was killed — each run is
 * resumed by exactly one of them.
 */
import { spawn } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { PostgresSessionStore } from "./postgres-session-store";
import { Client } from "pg";
import { freshSchemaName, startEmbeddedPostgres, type EmbeddedPostgresServer } from "./__fixtures__/embedded-postgres";
import { compileScript, type CompiledScript } from "../../session/src/__fixtures__/compiled-script";

const ROOT = join(__dirname, "..", "..", "..");

let server: EmbeddedPostgresServer | undefined;
// The child script compiled once by esbuild (the compiler tsx uses), rather than through tsx's loader in every child.
let compiled: CompiledScript;
let compiledIn: string;
beforeAll(async () => {
  compiledIn = mkdtempSync(join(tmpdir(), "rein-resumable-child-"));
  compiled = compileScript(join(__dirname, "__fixtures__", "resumable-child.ts"), compiledIn);
  server = await startEmbeddedPostgres();
}, 60_000);
afterAll(async () => {
  await server?.stop();
  rmSync(compiledIn, { recursive: true, force: true });
});

function child(args: string[]): { process: ReturnType<typeof spawn>; output: Promise<string>; ready(): Promise<void> } {
  // node itself (not the tsx wrapper script), so a SIGKILL kills the worker.
  const started = spawn(process.execPath, [...compiled.nodeArgs, ...args], {
    cwd: ROOT,
    env: { ...process.env, ...compiled.env },
    stdio: ["ignore", "pipe", "pipe"],
  });
  let output = "";
  let errors = "";
  const waiting: (() => void)[] = [];
  started.stdout!.on("data", (chunk: Buffer) => {
    output += chunk.toString();
    if (output.includes("ready\n")) for (const wake of waiting.splice(0)) wake();
  });
  started.stderr!.on("data", (chunk: Buffer) => (errors += chunk.toString()));
  const finished = new Promise<string>((done, fail) =>
    started.on("exit", (code, signal) => (code === 0 || signal === "SIGKILL" ? done(output) : fail(new Error(`child exited ${code}: ${errors}`)))),
  );
  const ready = (): Promise<void> =>
    new Promise<void>((done, fail) => {
      if (output.includes("ready\n")) return done();
      waiting.push(done);
      finished.then(() => fail(new Error(`child ended before ready: ${errors}`)), fail);
    });
  return { process: started, output: finished, ready };
}

function open(schema: string): PostgresSessionStore {
  return new PostgresSessionStore({ connectionString: server!.connectionString, schema, shutdownFlush: false });
}

test("a lease holds while its live holder renews it, and is free once it expired", async () => {
  const schema = freshSchemaName();
  const first = open(schema);
  const second = open(schema);
  try {
    first.createSession("s");
    first.registerRun("r1", "s", "A.run", 60_000);
    expect(second.claimRun("r1", ["running"], 60_000)).toBe(false);
    expect(first.renewRun("r1", 1)).toBe(true);
    await new Promise((done) => setTimeout(done, 20));
    expect(second.claimRun("r1", ["running"], 60_000)).toBe(true);
    // The first store lost it: it can neither renew nor release it.
    expect(first.renewRun("r1", 60_000)).toBe(false);
    first.releaseRun("r1", "completed", null);
    expect(second.getRun("r1")).toMatchObject({ state: "running", owned: true });
    second.releaseRun("r1", "paused", '{"kind":"pause"}');
    expect(first.listRuns(["paused"]).map((run) => [run.runId, run.reason])).toEqual([["r1", '{"kind":"pause"}']]);
    expect(first.claimRun("r1", ["running"], 1000)).toBe(false);
    expect(first.claimRun("r1", ["paused"], 1000)).toBe(true);
    first.deleteSession("s");
    expect(first.getRun("r1")).toBeUndefined();
  } finally {
    first.close();
    second.close();
  }
});

test("a schema of version 1 gains the runs table (with lease epochs) when opened, its sessions kept", async () => {
  const schema = freshSchemaName();
  const first = open(schema);
  first.createSession("kept");
  first.close();
  const admin = new Client({ connectionString: server!.connectionString });
  await admin.connect();
  try {
    await admin.query(`DROP TABLE "${schema}".consumed; DROP TABLE "${schema}".runs; DELETE FROM "${schema}".rein_schema WHERE version > 1`);
  } finally {
    await admin.end();
  }
  const reopened = open(schema);
  try {
    expect(reopened.hasSession("kept")).toBe(true);
    expect(reopened.listRuns()).toEqual([]);
    reopened.registerRun("r1", "kept", "A.run", 1000);
    expect(reopened.getRun("r1")).toMatchObject({ state: "running", owned: true, sessionId: "kept", leaseEpoch: 1 });
  } finally {
    reopened.close();
  }
});

test("a schema of version 2 gains lease epochs when opened: its runs start at epoch 1, and claims count on from there", async () => {
  const schema = freshSchemaName();
  const first = open(schema);
  first.createSession("kept");
  first.registerRun("r1", "kept", "A.run", 60_000);
  first.releaseRun("r1", "interrupted", null);
  first.close();
  const admin = new Client({ connectionString: server!.connectionString });
  await admin.connect();
  try {
    await admin.query(`DROP TABLE "${schema}".consumed; ALTER TABLE "${schema}".runs DROP COLUMN lease_epoch; DELETE FROM "${schema}".rein_schema WHERE version > 2`);
  } finally {
    await admin.end();
  }
  const reopened = open(schema);
  try {
    expect(reopened.getRun("r1")).toMatchObject({ state: "interrupted", leaseEpoch: 1 });
    expect(reopened.claimRun("r1", ["interrupted"], 60_000, 1)).toBe(true);
    expect(reopened.getRun("r1")).toMatchObject({ state: "running", leaseEpoch: 2 });
  } finally {
    reopened.close();
  }
});

test("3 processes race to resume 50 runs whose worker was killed: each run is resumed exactly once", async () => {
  const schema = freshSchemaName();
  const RUNS = 50;
  const starter = child(["start", server!.connectionString, schema, String(RUNS)]);
  await starter.ready();
  starter.process.kill("SIGKILL");
  await starter.output;

  const before = open(schema);
  try {
    const runs = before.listRuns();
    expect(runs).toHaveLength(RUNS);
    expect(runs.every((run) => run.state === "running" && run.owned)).toBe(true);
  } finally {
    before.close();
  }

  const startAt = String(Date.now() + 3000);
  const racers = await Promise.all([0, 1, 2].map(() => child(["race", server!.connectionString, schema, startAt]).output));
  const reports = racers.map(
    (output) =>
      JSON.parse(output.trim().split("\n").pop()!) as {
        calls: string[];
        resumed: { runId: string; status: string; result: string }[];
        leftAlone: { runId: string; reason: string }[];
      },
  );
  const resumed = reports.flatMap((report) => report.resumed.map((run) => run.runId));
  expect(resumed).toHaveLength(RUNS);
  expect(new Set(resumed).size).toBe(RUNS);
  // The interrupted step ran once per run, across all three processes.
  const calls = reports.flatMap((report) => report.calls).sort((a, b) => Number(a) - Number(b));
  expect(calls).toEqual(Array.from({ length: RUNS }, (_, index) => String(index)));
  expect(reports.flatMap((report) => report.resumed).every((run) => run.status === "completed" && /^first \d+ second$/.test(run.result))).toBe(true);
  // What a racer left alone, another one had (its lease).
  expect(reports.flatMap((report) => report.leftAlone).every((run) => run.reason === "running-elsewhere" && resumed.includes(run.runId))).toBe(true);

  const after = open(schema);
  try {
    expect(after.listRuns().every((run) => run.state === "completed" && !run.owned)).toBe(true);
    const nodes = after.readNodes("jobs");
    const runNodes = nodes.filter((node) => node.name === "Worker.job");
    expect(runNodes).toHaveLength(RUNS);
    expect(runNodes.every((node) => node.metadata["status"] === "completed")).toBe(true);
    // One "second" step node per run: reopened, never written twice.
    expect(nodes.filter((node) => node.metadata["step"] === "second")).toHaveLength(RUNS);
  } finally {
    after.close();
  }
}, 120_000);
