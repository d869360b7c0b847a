import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import Database from "libsql";
import { ReachError, ReachPolicy, CancelledError, InterruptedError } from "@rein/guard";
import { Agent } from "../agent/agent";
import { Context } from "../context/context";
import { InMemorySessionStore } from "@rein/session";
import { SessionStore } from "@rein/session";
import { RunNotResumableError, StepValueError } from "./resumable-errors";
import { resumeInterrupted, resumeRun } from "./resume-run";
import { step } from "./step";
import { currentReach } from "../runtime/reach";

let directory: string;
const opened: SessionStore[] = [];
beforeEach(() => {
  directory = mkdtempSync(join(tmpdir(), "rein-resume-"));
});
afterEach(() => {
  for (const store of opened.splice(0)) store.close();
  rmSync(directory, { recursive: true, force: true });
});

function fileStore(): SessionStore {
  const store = new SessionStore({ path: join(directory, "runs.db"), shutdownFlush: false });
  opened.push(store);
  if (!store.hasSession("s")) store.createSession("s");
  return store;
}

let stop: (() => Error) | undefined;
let gate: Promise<void> | undefined;
const ran: string[] = [];

class Job extends Agent {
  static methodOptions = { run: { resumable: true } };
  async run(name: string): Promise<string> {
    const first = await step("first", async (n: string) => (ran.push("first"), `${n}!`), name);
    return step("second", async (text: string) => {
      ran.push("second");
      const failure = stop?.();
      stop = undefined;
      if (failure !== undefined) throw failure;
      await gate;
      return `${text}?`;
    }, first);
  }
}

beforeEach(() => {
  ran.length = 0;
  stop = undefined;
  gate = undefined;
});

function setUpdatedAt(runId: string, agoMs: number): void {
  const db = new Database(join(directory, "runs.db"));
  try {
    db.prepare("UPDATE rein_runs SET updated_at = ? WHERE run_id = ?").run(Date.now() - agoMs, runId);
  } finally {
    db.close();
  }
}

test("runs interrupted less than 2 hours ago continue automatically; older ones wait for resumeRun", async () => {
  const store = fileStore();
  const job = new Job({ context: Context.forSession(store, "s") });
  stop = () => new InterruptedError("restart");
  await expect(job.run("old")).rejects.toThrow("restart");
  const old = store.listRuns().at(-1)!.runId;
  stop = () => new InterruptedError("restart");
  await expect(job.run("recent")).rejects.toThrow("restart");
  const recent = store.listRuns().at(-1)!.runId;
  expect(store.getRun(recent)).toMatchObject({ state: "interrupted", owned: false });
  setUpdatedAt(old, 2 * 60 * 60 * 1000 + 60_000);
  setUpdatedAt(recent, 2 * 60 * 60 * 1000 - 60_000);
  ran.length = 0;

  const report = await resumeInterrupted({ store });
  expect(report.resumed).toEqual([{ runId: recent, name: "Job.run", status: "completed", result: "recent!?" }]);
  expect(report.leftAlone).toEqual([{ runId: old, name: "Job.run", reason: "too-old", message: expect.stringContaining(`resumeRun("${old}")`) }]);
  expect(ran).toEqual(["second"]);
  expect(await resumeRun(old)).toBe("old!?");
});

test("a cancelled run is never continued automatically; resumeRun finishes it", async () => {
  const store = fileStore();
  const job = new Job({ context: Context.forSession(store, "s") });
  stop = () => new CancelledError("the user cancelled");
  await expect(job.run("c")).rejects.toThrow("the user cancelled");
  const runId = store.listRuns().at(-1)!.runId;
  expect(store.getRun(runId)).toMatchObject({ state: "cancelled" });
  expect(store.readNodes("s").find((node) => node.id === runId)!.metadata["status"]).toBe("cancelled");
  const report = await resumeInterrupted({ store });
  expect(report).toEqual({ resumed: [], leftAlone: [expect.objectContaining({ runId, reason: "cancelled" })] });
  expect(await job.resumeRun(runId)).toBe("c!?");
});

test("a run of this process, or held by a live worker (another store on the file), is not taken", async () => {
  const mine = fileStore();
  const theirs = new SessionStore({ path: join(directory, "runs.db"), shutdownFlush: false });
  opened.push(theirs);
  const job = new Job({ context: Context.forSession(mine, "s") });
  let open!: () => void;
  gate = new Promise((done) => (open = done));
  const running = job.run("held");
  const runId = mine.listRuns().at(-1)!.runId;
  await new Promise((done) => setTimeout(done, 10));
  expect(ran).toEqual(["first", "second"]);
  await expect(job.resumeRun(runId)).rejects.toMatchObject({ name: "RunNotResumableError", message: expect.stringContaining("already running in this process") });
  expect((await resumeInterrupted({ store: theirs })).resumed).toEqual([]);
  open();
  expect(await running).toBe("held!?");
  expect(theirs.getRun(runId)).toMatchObject({ state: "completed", owned: false });

  // A lease another live store holds (as another worker's would be): neither resumeRun nor resumeInterrupted takes it.
  mine.registerRun("held-elsewhere", "s", "Job.run", 60_000);
  const other = new Job({ context: Context.forSession(theirs, "s") });
  const refused = await other.resumeRun("held-elsewhere").catch((error: unknown) => error);
  expect(RunNotResumableError.isInstance(refused)).toBe(true);
  expect((refused as Error).message).toContain("is running in another worker (its lease holds until");
  expect((await resumeInterrupted({ store: theirs })).leftAlone).toEqual([expect.objectContaining({ runId: "held-elsewhere", reason: "running-elsewhere" })]);
});

test("resumeRun finds the run in the stores of this process's agents, and says when it cannot", async () => {
  const store = new InMemorySessionStore();
  store.createSession("s");
  const job = new Job({ context: Context.forSession(store, "s") });
  stop = () => new InterruptedError("restart");
  await expect(job.run("x")).rejects.toThrow("restart");
  const runId = store.listRuns()[0]!.runId;
  expect(await resumeRun(runId)).toBe("x!?");
  await expect(resumeRun("no-such-run")).rejects.toMatchObject({ name: "RunNotResumableError", message: expect.stringContaining("no resumable run 'no-such-run'") });
  await expect(resumeRun(runId, { policy: "x" } as never)).rejects.toThrow("unknown option 'policy'");
  await expect(job.resumeRun(runId, { codeChangePolicy: "newest" as never })).rejects.toThrow('codeChangePolicy must be "keep_original" or "use_latest"');
});

test("a resumable method's arguments must be JSON (saved to resume it): refused before anything is recorded", async () => {
  const store = new InMemorySessionStore();
  store.createSession("s");
  const job = new Job({ context: Context.forSession(store, "s") });
  const refused = await job.run(new Date() as never).catch((error: unknown) => error);
  expect(StepValueError.isInstance(refused)).toBe(true);
  expect((refused as Error).message).toContain('the input of step "Job.run" is not plain JSON');
  expect(store.readNodes("s")).toEqual([]);
  expect(store.listRuns()).toEqual([]);
});

test("without a store a resumable method is an ordinary call, its steps plain calls", async () => {
  expect(await new Job().run("free")).toBe("free!?");
  expect(ran).toEqual(["first", "second"]);
});

test("methodOptions.resumable is checked: true, false or { helpers, codeChangePolicy, leaseMs }", () => {
  const define = (resumable: unknown): unknown =>
    new (class Bad extends Agent {
      static methodOptions = { go: { resumable } };
      go(): void {}
    })();
  expect(() => define({ helpers: "x" })).toThrow("Invalid methodOptions for Bad.go: 'resumable' helpers must be an array of functions");
  expect(() => define({ codeChangePolicy: "latest" })).toThrow('codeChangePolicy must be "keep_original" or "use_latest"');
  expect(() => define({ leases: 1 })).toThrow("unknown field 'leases'");
  expect(() => define("yes")).toThrow("expected true, false or { helpers?, codeChangePolicy?, leaseMs? }");
  expect(() => define({ helpers: [() => 1], codeChangePolicy: "use_latest", leaseMs: 5000 })).not.toThrow();
});

test("a resumable method is an Agent entry: it counts one level of logic depth and reach refuses it past the limit", async () => {
  const store = new InMemorySessionStore();
  store.createSession("s");
  const context = Context.forSession(store, "s");
  const depths: number[] = [];
  class Inner extends Agent {
    static methodOptions = { go: { resumable: true } };
    async go(): Promise<string> {
      return step("inner", async () => "inner");
    }
  }
  class Outer extends Agent {
    static reach = new ReachPolicy({ maxLogicDepth: 1 });
    static methodOptions = { go: { resumable: true } };
    async go(): Promise<string> {
      await step("depth", async () => void depths.push(currentReach()!.depth.used));
      return new Inner({ context }).go();
    }
  }
  const refused = await new Outer({ context }).go().catch((error: unknown) => error);
  expect(depths).toEqual([1]);
  expect(ReachError.isInstance(refused)).toBe(true);
  // As an ordinary refused entry, the refused run is recorded, as an error (a resume with more budget can finish it).
  expect(store.listRuns().map((run) => [run.name, run.state])).toEqual([
    ["Outer.go", "error"],
    ["Inner.go", "error"],
  ]);
  expect(store.readNodes("s").filter((node) => node.metadata["step"] === "inner")).toEqual([]);
});

test("a resumable method inherited from a base class is resumed by an agent of the subclass", async () => {
  const store = new InMemorySessionStore();
  store.createSession("s");
  class Special extends Job {}
  const special = new Special({ context: Context.forSession(store, "s") });
  stop = () => new InterruptedError("restart");
  await expect(special.run("sub")).rejects.toThrow("restart");
  const record = store.listRuns()[0]!;
  expect(record.name).toBe("Job.run");
  ran.length = 0;
  const report = await resumeInterrupted({ store });
  expect(report.resumed).toEqual([expect.objectContaining({ runId: record.runId, status: "completed", result: "sub!?" })]);
  expect(ran).toEqual(["second"]);
});

test("a store whose asyncLeases has no claimRun (written before it was one of them) is claimed with its synchronous claimRun; the rest is awaited on its asyncLeases", async () => {
  const awaited: string[] = [];
  const claimed: string[] = [];
  class OlderAsyncStore extends InMemorySessionStore {
    readonly asyncLeases = {
      registerRun: async (...args: Parameters<InMemorySessionStore["registerRun"]>) => (awaited.push("registerRun"), this.registerRun(...args)),
      renewRun: async (...args: Parameters<InMemorySessionStore["renewRun"]>) => (awaited.push("renewRun"), this.renewRun(...args)),
      releaseRun: async (...args: Parameters<InMemorySessionStore["releaseRun"]>) => (awaited.push("releaseRun"), this.releaseRun(...args)),
      getRun: async (runId: string) => (awaited.push("getRun"), this.getRun(runId)),
      listRuns: async (...args: Parameters<InMemorySessionStore["listRuns"]>) => (awaited.push("listRuns"), this.listRuns(...args)),
    };
    override claimRun(...args: Parameters<InMemorySessionStore["claimRun"]>): boolean {
      claimed.push(args[0]);
      return super.claimRun(...args);
    }
  }
  const store = new OlderAsyncStore();
  store.createSession("s");
  ran.length = 0;
  stop = () => new Error("stopped at the second step");
  const job = new Job({ context: Context.forSession(store, "s") });
  await expect(job.run("a")).rejects.toThrow("stopped at the second step");
  const [record] = store.listRuns();
  awaited.length = 0;
  expect(await resumeRun(record!.runId)).toBe("a!?");
  expect(ran).toEqual(["first", "second", "second"]);
  expect(claimed).toEqual([record!.runId]);
  expect(awaited).toEqual(expect.arrayContaining(["getRun"]));
});
