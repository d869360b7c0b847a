import { Agent } from "../agent/agent";
import { Context } from "../context/context";
import { InterruptedError } from "@rein/guard";
import { Runtime } from "../runtime/runtime";
import type { RunEvent } from "../runtime/runtime-events";
import { InMemorySessionStore } from "@rein/session";
import { SessionStore } from "@rein/session";
import type { SessionNode } from "@rein/session";
import { RunPausedError, StepValueError } from "./resumable-errors";
import { resumeInterrupted, resumeRun } from "./resume-run";
import { parallel, step, workflow } from "./step";

const calls: Record<string, number> = {};
const count = (name: string): void => void (calls[name] = (calls[name] ?? 0) + 1);
let failOnce: Set<string>;

function double(n: number): number {
  count("double");
  return n * 2;
}

async function addAsync(a: number, b: number): Promise<number> {
  count("add");
  await Promise.resolve();
  if (failOnce.delete("add")) throw new InterruptedError("host going away");
  return a + b;
}

class Pipeline extends Agent {
  static methodOptions = { process: { resumable: true }, sync: { resumable: true } };

  async process(start: number): Promise<{ total: number; labels: string[] }> {
    const first = step("double", double, start);
    const second = step("double", double, first);
    const total = await step("add", addAsync, first, second);
    const labels = await workflow("label", async (value: number) => {
      const text = await step("format", async (v: number) => {
        count("format");
        if (failOnce.delete("format")) throw new InterruptedError("host going away");
        return `#${v}`;
      }, value);
      return [text, step("upper", (t: string) => (count("upper"), t.toUpperCase()), text)];
    }, total);
    return { total, labels };
  }

  sync(n: number): number {
    const sum = step("double", double, n) + step("double", double, n + 1);
    return step("check", (value: number) => {
      count("check");
      if (failOnce.delete("check")) throw new InterruptedError("host going away");
      return value;
    }, sum);
  }
}

beforeEach(() => {
  for (const key of Object.keys(calls)) delete calls[key];
  failOnce = new Set();
});

function setup(): { store: InMemorySessionStore; agent: Pipeline } {
  const store = new InMemorySessionStore();
  store.createSession("s");
  return { store, agent: new Pipeline({ context: Context.forSession(store, "s") }) };
}

function stepNodes(nodes: readonly SessionNode[]): SessionNode[] {
  return nodes.filter((node) => typeof node.metadata["step"] === "string");
}

test("steps are code nodes below the run with their JSON input and result, repeated names counted by occurrence", async () => {
  const { store, agent } = setup();
  expect(await agent.process(3)).toEqual({ total: 18, labels: ["#18", "#18"] });
  const nodes = store.readNodes("s");
  const run = nodes.find((node) => node.name === "Pipeline.process")!;
  expect(run.metadata["status"]).toBe("completed");
  const direct = nodes.filter((node) => node.caller === run.id);
  expect(direct.map((node) => [node.metadata["step"], node.metadata["occurrence"], node.input, node.output])).toEqual([
    ["double", 0, [3], 6],
    ["double", 1, [6], 12],
    ["add", 0, [6, 12], 18],
    ["label", 0, [18], ["#18", "#18"]],
  ]);
  const label = direct[3]!;
  expect(label.metadata["workflow"]).toBe(true);
  expect(nodes.filter((node) => node.caller === label.id).map((node) => node.metadata["step"])).toEqual(["format", "upper"]);
  expect(store.getRun(run.id)).toMatchObject({ state: "completed", owned: false, sessionId: "s", name: "Pipeline.process" });
});

test("a non-JSON argument is a StepValueError before the step runs; a non-JSON result is one too", async () => {
  const { agent } = setup();
  class Dates extends Agent {
    static methodOptions = { input: { resumable: true }, output: { resumable: true } };
    async input(): Promise<unknown> {
      return step("when", (d: Date) => (count("when"), d.getTime()), new Date(0));
    }
    async output(): Promise<unknown> {
      return step("make", () => (count("make"), new Map()));
    }
  }
  const dates = new Dates({ context: agent.context });
  const refused = await dates.input().catch((error: unknown) => error);
  expect(StepValueError.isInstance(refused)).toBe(true);
  expect(refused).toMatchObject({ step: "when", which: "input", path: "[0]" });
  expect((refused as Error).message).toContain("is a Date, not a plain object");
  expect(calls["when"]).toBeUndefined();
  await expect(dates.output()).rejects.toMatchObject({ name: "StepValueError", which: "result" });
  expect(calls["make"]).toBe(1);
});

test("outside a resumable run, step, workflow and parallel just call their functions", async () => {
  expect(step("double", double, 4)).toBe(8);
  expect(await workflow("w", async (n: number) => n + 1, 1)).toBe(2);
  expect(await parallel({ a: [double, 2], b: [async (s: string) => s + "!", "x"] })).toEqual({ a: 4, b: "x!" });
});

test("resume returns finished steps' saved results without calling them, on the same nodes, with the uninterrupted result", async () => {
  const { store, agent } = setup();
  const uninterrupted = await agent.process(5);
  const plain = { ...calls };

  for (const key of Object.keys(calls)) delete calls[key];
  failOnce = new Set(["format"]);
  await expect(agent.process(5)).rejects.toThrow("host going away");
  const [, run] = store.listRuns();
  expect(run).toMatchObject({ state: "interrupted", owned: false });
  const before = store.readNodes("s").filter((node) => node.seq > store.readNodes("s").find((n) => n.id === run!.runId)!.seq - 1);
  const idsBefore = stepNodes(before).map((node) => node.id);
  expect(calls).toEqual({ double: 2, add: 1, format: 1 });

  for (const key of Object.keys(calls)) delete calls[key];
  expect(await agent.resumeRun(run!.runId)).toEqual(uninterrupted);
  // Only the unfinished step (and what follows it) ran again.
  expect(calls).toEqual({ format: 1, upper: 1 });
  expect(plain).toEqual({ double: 2, add: 1, format: 1, upper: 1 });
  const after = store.readNodes("s");
  const runNode = after.find((node) => node.id === run!.runId)!;
  expect(runNode.metadata["status"]).toBe("completed");
  expect(runNode.output).toEqual(uninterrupted);
  const below = (id: string): SessionNode[] => after.filter((node) => node.caller === id);
  const stepIds = [...below(run!.runId), ...below(below(run!.runId)[3]!.id)].map((node) => node.id);
  // The same node ids: finished steps are not written again, the unfinished one was reopened.
  expect(stepIds.slice(0, 5)).toEqual(idsBefore);
  expect(stepIds).toHaveLength(6);
  expect(store.getRun(run!.runId)).toMatchObject({ state: "completed" });
});

test("a sync resumable method runs and replays its sync steps synchronously", async () => {
  const { store, agent } = setup();
  failOnce = new Set(["check"]);
  expect(() => agent.sync(1)).toThrow("host going away");
  const runId = store.listRuns()[0]!.runId;
  expect(calls).toEqual({ double: 2, check: 1 });
  expect(await agent.resumeRun(runId)).toBe(6);
  expect(calls).toEqual({ double: 2, check: 2 });
  // A completed run cannot be resumed again.
  await expect(agent.resumeRun(runId)).rejects.toMatchObject({ name: "RunNotResumableError", message: expect.stringContaining("has completed") });
});

test("parallel branches save progress each on its own; a failed branch keeps the others' results", async () => {
  const { store, agent } = setup();
  class Fan extends Agent {
    static methodOptions = { fan: { resumable: true } };
    async fan(n: number): Promise<unknown> {
      const branch = async (name: string, value: number): Promise<number> => {
        const a = await step("a", async (v: number) => (count(`${name}.a`), v + 1), value);
        const b = await step("b", async (v: number) => {
          count(`${name}.b`);
          if (failOnce.delete(`${name}.b`)) throw new Error(`${name}.b failed`);
          return v * 10;
        }, a);
        return b;
      };
      return parallel({ left: [branch, "left", n], right: [branch, "right", n + 1] });
    }
  }
  const fan = new Fan({ context: agent.context });
  failOnce = new Set(["left.b"]);
  await expect(fan.fan(1)).rejects.toThrow("left.b failed");
  expect(calls).toEqual({ "left.a": 1, "left.b": 1, "right.a": 1, "right.b": 1 });
  const runId = store.listRuns().find((run) => run.name === "Fan.fan")!.runId;
  expect(store.getRun(runId)).toMatchObject({ state: "error" });

  for (const key of Object.keys(calls)) delete calls[key];
  expect(await resumeRun(runId)).toEqual({ left: 20, right: 30 });
  expect(calls).toEqual({ "left.b": 1 });
});

test("agent.pause() pauses the run before its next step; resumeInterrupted leaves it; resumeRun finishes it", async () => {
  const { store, agent } = setup();
  class Slow extends Agent {
    static methodOptions = { work: { resumable: true } };
    async work(): Promise<number> {
      const one = await step("one", async () => (count("one"), this.pause(), 1));
      return one + (await step("two", async () => (count("two"), 2)));
    }
  }
  const slow = new Slow({ context: agent.context });
  const paused = await slow.work().catch((error: unknown) => error);
  expect(RunPausedError.isInstance(paused)).toBe(true);
  expect(paused).toMatchObject({ kind: "pause", step: "two" });
  const runId = (paused as RunPausedError).runId;
  expect(store.readNodes("s").find((node) => node.id === runId)!.metadata["status"]).toBe("paused");

  const report = await resumeInterrupted({ store });
  expect(report.resumed).toEqual([]);
  expect(report.leftAlone).toEqual([expect.objectContaining({ runId, reason: "paused" })]);
  expect(calls).toEqual({ one: 1 });

  expect(await slow.resumeRun(runId)).toBe(3);
  expect(calls).toEqual({ one: 1, two: 1 });
});

test("a SQLite store keeps runs and their leases: claims, renewals, releases, deletion with the session", () => {
  const store = new SessionStore({ path: ":memory:" });
  store.createSession("s");
  store.registerRun("r1", "s", "A.b", 60_000);
  expect(store.getRun("r1")).toMatchObject({ state: "running", owned: true, name: "A.b", sessionId: "s" });
  // Held by this live store: nobody else can claim it.
  expect(store.claimRun("r1", ["running"], 1000)).toBe(false);
  expect(store.renewRun("r1", 1000)).toBe(true);
  store.releaseRun("r1", "paused", JSON.stringify({ kind: "pause" }));
  expect(store.getRun("r1")).toMatchObject({ state: "paused", owned: false, leaseUntil: null });
  expect(store.claimRun("r1", ["running"], 1000)).toBe(false);
  expect(store.claimRun("r1", ["paused"], 1000)).toBe(true);
  expect(store.listRuns(["running"]).map((run) => run.runId)).toEqual(["r1"]);
  store.deleteSession("s");
  expect(store.listRuns()).toEqual([]);
  store.close();
});

test("the run and its steps report node start and end events to the agent's runtime listener", async () => {
  const store = new InMemorySessionStore();
  store.createSession("s");
  const events: RunEvent[] = [];
  class Listened extends Agent {
    static methodOptions = { go: { resumable: true } };
    async go(): Promise<number> {
      return step("one", async () => 1);
    }
  }
  const agent = new Listened({ context: Context.forSession(store, "s"), runtime: new Runtime({ onEvent: (event) => events.push(event) }) });
  await agent.go();
  const nodes = events.filter((event): event is Extract<RunEvent, { type: "node" }> => event.type === "node");
  expect(nodes.map((event) => [event.phase, event.name, event.status])).toEqual([
    ["start", "Listened.go", undefined],
    ["start", "one", undefined],
    ["end", "one", "completed"],
    ["end", "Listened.go", "completed"],
  ]);
});
