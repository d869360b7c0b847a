import { spawn, type ChildProcess } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { SessionStore } from "@rein/session";
import type { SessionNode } from "@rein/session";
import { compileScript, type CompiledScript } from "../../../session/src/__fixtures__/compiled-script";

const ROOT = resolve(__dirname, "../../../..");
/**
 * Each test runs 2 to 4 child processes one after another, each loading the compiled child: about 0.7 s of CPU
 * each, and many seconds of waiting each at a load of 20 on two cores (60 s was too short there with tsx children).
 */
const CHILDREN_TIMEOUT_MS = 180_000;

// The 22 children run the sources compiled once into one file (esbuild, as tsx would transform them), not a tsx
// child each: tsx's hooks cost about 1 s of CPU more per child.
let compiled: CompiledScript;
let scratch: string;
beforeAll(() => {
  scratch = mkdtempSync(join(tmpdir(), "rein-resumable-child-"));
  compiled = compileScript(join(__dirname, "__fixtures__", "resumable-child.ts"), scratch);
});
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

let directory: string;
beforeEach(() => {
  directory = mkdtempSync(join(tmpdir(), "rein-resumable-"));
});
afterEach(() => rmSync(directory, { recursive: true, force: true }));

interface Child {
  child: ChildProcess;
  lines: string[];
  waitFor(line: RegExp): Promise<string>;
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null; stderr: string }>;
}

function startChild(...args: string[]): Child {
  const child = spawn(process.execPath, [...compiled.nodeArgs, ...args], {
    cwd: ROOT,
    env: { ...process.env, ...compiled.env },
    stdio: ["ignore", "pipe", "pipe"],
  });
  const lines: string[] = [];
  let buffered = "";
  let stderr = "";
  const waiters: (() => void)[] = [];
  child.stdout!.on("data", (chunk: Buffer) => {
    buffered += chunk.toString();
    const parts = buffered.split("\n");
    buffered = parts.pop()!;
    lines.push(...parts);
    for (const wake of waiters.splice(0)) wake();
  });
  child.stderr!.on("data", (chunk: Buffer) => (stderr += chunk.toString()));
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null; stderr: string }>((done) =>
    child.once("exit", (code, signal) => done({ code, signal, stderr })),
  );
  const waitFor = (line: RegExp): Promise<string> =>
    new Promise((done, fail) => {
      const check = (): void => {
        const found = lines.find((seen) => line.test(seen));
        if (found !== undefined) done(found);
        else if (child.exitCode !== null || child.signalCode !== null) fail(new Error(`child exited before ${line}: ${stderr}`));
        else waiters.push(check);
      };
      void exited.then(() => waiters.length > 0 && check());
      check();
    });
  return { child, lines, waitFor, exited };
}

async function runToEnd(...args: string[]): Promise<string[]> {
  const started = startChild(...args);
  const { code, stderr } = await started.exited;
  if (code !== 0) throw new Error(`child failed (${code}): ${stderr}`);
  return started.lines;
}

function calls(file: string): string[] {
  try {
    return readFileSync(file, "utf8").split("\n").filter(Boolean);
  } catch {
    return [];
  }
}

/** The step nodes below the run (any depth), read from the file after the child is gone. */
function stepsOf(db: string, runId: string): SessionNode[] {
  const store = new SessionStore({ path: db, shutdownFlush: false });
  try {
    const nodes = store.readNodes("s");
    const below = new Set([runId]);
    const found: SessionNode[] = [];
    for (const node of nodes) {
      if (node.caller === null || !below.has(node.caller)) continue;
      below.add(node.id);
      if (typeof node.metadata["step"] === "string") found.push(node);
    }
    return found;
  } finally {
    store.close();
  }
}

function runNode(db: string, runId: string): SessionNode {
  const store = new SessionStore({ path: db, shutdownFlush: false });
  try {
    return store.readNodes("s").find((node) => node.id === runId)!;
  } finally {
    store.close();
  }
}

async function killedAt(mode: string, stopAt: string, signal: RegExp, db: string, callsFile: string): Promise<string> {
  writeFileSync(callsFile, "");
  const started = startChild(mode, db, callsFile, stopAt);
  const runId = (await started.waitFor(/^run /)).slice(4);
  await started.waitFor(signal);
  started.child.kill("SIGKILL");
  expect((await started.exited).signal).toBe("SIGKILL");
  return runId;
}

function report(lines: string[]): { resumed: { runId: string; status: string; result?: unknown; error?: string }[]; leftAlone: { runId: string; reason: string; message: string }[] } {
  return JSON.parse(lines.find((line) => line.startsWith("report "))!.slice(7));
}

/**
 * The result of a mode's run when nothing interrupts it, from a child of its own. A mode's run is the same whatever
 * the test (its input is fixed and its store new), so the two tests of `start` share one child's answer.
 */
const uninterruptedResults = new Map<string, Promise<unknown>>();
const uninterrupted = (mode: string): Promise<unknown> => {
  let result = uninterruptedResults.get(mode);
  if (result === undefined) {
    const plain = mkdtempSync(join(tmpdir(), "rein-resumable-plain-"));
    result = runToEnd(mode, join(plain, `${mode}.db`), join(plain, `${mode}.calls`))
      .then((lines) => JSON.parse(lines.find((line) => line.startsWith("result "))!.slice(7)) as unknown)
      .finally(() => rmSync(plain, { recursive: true, force: true }));
    uninterruptedResults.set(mode, result);
  }
  return result;
};

test.each([
  ["between two steps", "between", /^between words and score$/, ["fetch", "words"], ["score", "format"]],
  ["inside a step", "inside", /^inside score$/, ["fetch", "words", "score"], ["score", "format"]],
])("SIGKILL %s, then resumeInterrupted in a new process: finished steps are not run again, same nodes, same result", async (_, stopAt, signal, before, after) => {
  const db = join(directory, "runs.db");
  const callsFile = join(directory, "calls");
  const expected = await uninterrupted("start");
  const runId = await killedAt("start", stopAt, signal, db, callsFile);
  expect(calls(callsFile)).toEqual(before);
  const savedSteps = stepsOf(db, runId).filter((node) => node.metadata["status"] === "completed");
  expect(savedSteps.map((node) => node.metadata["step"])).toEqual(["fetch", "words"]);

  writeFileSync(callsFile, "");
  const resumed = report(await runToEnd("resume", db, callsFile));
  expect(resumed).toEqual({ resumed: [{ runId, status: "completed", result: expected }], leftAlone: [] });
  // fetch and words were not called again: their saved results were given back.
  expect(calls(callsFile)).toEqual(after);
  const steps = stepsOf(db, runId);
  expect(steps.slice(0, 2).map((node) => node.id)).toEqual(savedSteps.map((node) => node.id));
  expect(steps.map((node) => node.metadata["step"])).toEqual(["fetch", "words", "score", "label", "format"]);
  expect(steps.every((node) => node.metadata["status"] === "completed")).toBe(true);
  const run = runNode(db, runId);
  expect(run.metadata["status"]).toBe("completed");
  expect(run.output).toEqual(expected);
}, CHILDREN_TIMEOUT_MS);

test("SIGKILL while parallel branches run: each branch resumes from its own progress", async () => {
  const db = join(directory, "runs.db");
  const callsFile = join(directory, "calls");
  const expected = await uninterrupted("fan");
  const runId = await killedAt("fan", "parallel", /^inside left\.b$/, db, callsFile);
  // The right branch finished; the left one stopped inside b.
  expect(calls(callsFile).sort()).toEqual(["left.a", "left.b", "right.a", "right.b", "right.c"]);

  writeFileSync(callsFile, "");
  const resumed = report(await runToEnd("resume", db, callsFile));
  expect(resumed.resumed).toEqual([{ runId, status: "completed", result: expected }]);
  expect(calls(callsFile)).toEqual(["left.b", "left.c"]);
  const steps = stepsOf(db, runId);
  expect(steps.filter((node) => node.metadata["workflow"] === true).map((node) => node.metadata["step"])).toEqual(["left", "right"]);
  expect(steps.every((node) => node.metadata["status"] === "completed")).toBe(true);
}, CHILDREN_TIMEOUT_MS);

test("an external step killed before its result was saved is never continued automatically; resumeRun continues it", async () => {
  const db = join(directory, "runs.db");
  const callsFile = join(directory, "calls");
  const runId = await killedAt("charge", "external", /^inside pay$/, db, callsFile);
  expect(calls(callsFile)).toEqual(["price", "pay"]);

  writeFileSync(callsFile, "");
  const first = report(await runToEnd("resume", db, callsFile));
  expect(first.resumed).toEqual([]);
  expect(first.leftAlone).toEqual([
    expect.objectContaining({ runId, reason: "external", message: expect.stringContaining(`step "pay" started an external operation whose result was not saved: check the operation's result first`) }),
  ]);
  expect(calls(callsFile)).toEqual([]);
  expect(runNode(db, runId).metadata["status"]).toBe("paused");
  // Asked again, it is still left alone (now as a paused run, with the same message).
  const again = report(await runToEnd("resume", db, callsFile));
  expect(again.leftAlone).toEqual([expect.objectContaining({ runId, reason: "paused", message: expect.stringContaining("check the operation's result first") })]);

  const lines = await runToEnd("resume-run", db, callsFile, runId);
  expect(JSON.parse(lines.find((line) => line.startsWith("result "))!.slice(7))).toBe("sent: paid 700 for order-7");
  expect(calls(callsFile)).toEqual(["pay", "notify"]);
}, CHILDREN_TIMEOUT_MS);

test("a run killed while a tool call waited for a person's approval is never continued automatically; resumeRun asks again and finishes it", async () => {
  const db = join(directory, "runs.db");
  const callsFile = join(directory, "calls");
  const runId = await killedAt("review", "approval", /^awaiting approval$/, db, callsFile);
  expect(calls(callsFile)).toEqual(["draft"]);

  writeFileSync(callsFile, "");
  const first = report(await runToEnd("resume", db, callsFile));
  expect(first.resumed).toEqual([]);
  expect(first.leftAlone).toEqual([
    expect.objectContaining({ runId, reason: "approval", message: expect.stringContaining("waiting for a person's approval of a 'publish' call") }),
  ]);
  expect(calls(callsFile)).toEqual([]);
  expect(runNode(db, runId).metadata).toMatchObject({ status: "paused", pause: { kind: "approval", step: "publish" }, awaitingApproval: null });
  // Asked again, it stays left alone (as a paused run, same message).
  expect(report(await runToEnd("resume", db, callsFile)).leftAlone).toEqual([
    expect.objectContaining({ runId, reason: "paused", message: expect.stringContaining("approval of a 'publish' call") }),
  ]);

  // resumeRun: the finished draft step is not run again; the approval is asked again (granted here) and the run finishes.
  const lines = await runToEnd("resume-run", db, callsFile, runId);
  expect(JSON.parse(lines.find((line) => line.startsWith("result "))!.slice(7))).toBe("published");
  expect(calls(callsFile)).toEqual(["publish"]);
}, CHILDREN_TIMEOUT_MS);

test("3 processes resume the interrupted runs of one SQLite file at once: each run is resumed exactly once", async () => {
  const db = join(directory, "runs.db");
  const callsFile = join(directory, "calls");
  const RUNS = 20;
  writeFileSync(callsFile, "");
  const starter = startChild("many", db, callsFile, String(RUNS));
  await starter.waitFor(/^ready$/);
  starter.child.kill("SIGKILL");
  await starter.exited;
  expect(calls(callsFile).filter((name) => name === "score")).toHaveLength(RUNS);

  writeFileSync(callsFile, "");
  const reports = (await Promise.all([0, 1, 2].map(() => runToEnd("resume", db, callsFile)))).map(report);
  const resumed = reports.flatMap((one) => one.resumed);
  expect(resumed).toHaveLength(RUNS);
  expect(new Set(resumed.map((run) => run.runId)).size).toBe(RUNS);
  expect(resumed.every((run) => run.status === "completed")).toBe(true);
  // Each run's interrupted step ran once in all, and its finished steps in none.
  expect(calls(callsFile).sort()).toEqual([...Array(RUNS).fill("format"), ...Array(RUNS).fill("score")]);
  expect(reports.flatMap((one) => one.leftAlone).every((run) => run.reason === "running-elsewhere")).toBe(true);
}, CHILDREN_TIMEOUT_MS);

test("two processes on one SQLite file: worker A stalls inside a step past its lease, worker B resumes the run and completes it; A's late write is refused (LeaseLostError) and B's result stands", async () => {
  const db = join(directory, "runs.db");
  const callsFile = join(directory, "calls");
  writeFileSync(callsFile, "");
  const workerA = startChild("lease-a", db, callsFile);
  const runId = (await workerA.waitFor(/^run /)).slice(4);
  // Worker B asks until A's lease has expired (A is stuck: nothing renews it), then takes the run and finishes it.
  const linesB = await runToEnd("lease-b", db, callsFile, runId);
  expect(JSON.parse(linesB.find((line) => line.startsWith("result "))!.slice(7))).toBe("B's work on fetched report");
  const exitA = await workerA.exited;
  expect(exitA.code).toBe(0);
  expect(JSON.parse(workerA.lines.find((line) => line.startsWith("outcome "))!.slice(8))).toEqual({
    error: { name: "RunPausedError", kind: "lease-lost", cause: { name: "LeaseLostError", runId, heldEpoch: 1, currentEpoch: 2 } },
  });
  // A fetched and started the work; B took the fetched page from the saved step and did the work again.
  expect(calls(callsFile)).toEqual(["fetch", "work lease-a", "work lease-b"]);
  // B's result stands: on the run's node, on the step's, and in the store's run record.
  const run = runNode(db, runId);
  expect(run.metadata["status"]).toBe("completed");
  expect(run.output).toBe("B's work on fetched report");
  expect(stepsOf(db, runId).map((node) => [node.metadata["step"], node.output, node.metadata["status"]])).toEqual([
    ["fetch", "fetched report", "completed"],
    ["work", "B's work on fetched report", "completed"],
  ]);
  const store = new SessionStore({ path: db, shutdownFlush: false });
  try {
    expect(store.getRun(runId)).toMatchObject({ state: "completed", leaseEpoch: 2, owned: false });
  } finally {
    store.close();
  }
}, CHILDREN_TIMEOUT_MS);
