import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Agent } from "../agent/agent";
import { Context } from "../context/context";
import { Runtime } from "../runtime/runtime";
import { ScriptedProvider } from "../model/scripted-provider";
import { InMemorySessionStore } from "@rein/session";
import { SessionStore } from "@rein/session";
import { describeLeaseTakeover } from "./__fixtures__/lease-takeover";
import { RunPausedError } from "./resumable-errors";
import { step } from "./step";

/** Blocks this thread, as a worker whose event loop is stuck does (no timer runs: no lease renewal). */
const stall = (ms: number): void => void Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, ms);

// One scenario, every store: the suite lives in __fixtures__/lease-takeover.ts so the Postgres store runs it too.
describeLeaseTakeover("InMemorySessionStore (both workers on one store)", () => {
  const store = new InMemorySessionStore();
  return [store, store];
});

let directory: string | undefined;
let files = 0;
afterAll(() => {
  if (directory !== undefined) rmSync(directory, { recursive: true, force: true });
});
describeLeaseTakeover("SessionStore (each worker its own store on one SQLite file)", (workerB) => {
  directory ??= mkdtempSync(join(tmpdir(), "rein-lease-fence-"));
  const path = join(directory, `runs-${++files}.db`);
  return [new SessionStore({ path, shutdownFlush: false }), new workerB.SessionStore({ path, shutdownFlush: false })];
});

test("a worker whose run was claimed by another asks nobody for approval: the run's approval mark is refused with its lease", async () => {
  const store = new InMemorySessionStore();
  store.createSession("s");
  let asked = 0;
  class Publisher extends Agent {
    static methodOptions = {
      go: { resumable: { leaseMs: 100 } },
      publish: {
        tool: true,
        requiresApproval: true,
        description: "Publish a text.",
        parameters: { type: "object", properties: { text: { type: "string" } }, required: ["text"] },
      },
    };
    static runtime = new Runtime({ provider: new ScriptedProvider([{ toolCalls: [{ name: "publish", input: { text: "the draft" } }] }, "published"]) });

    publish(text: string): string {
      return `published ${text}`;
    }

    async go(): Promise<string> {
      return step("publish", async () => {
        const runId = store.listRuns().at(-1)!.runId;
        // This worker's event loop is stuck past its lease, and another worker claims the run meanwhile.
        while (store.getRun(runId)!.leaseUntil! >= Date.now()) stall(5);
        expect(store.claimRun(runId, ["running"], 30_000, 1)).toBe(true);
        return this.ask("Publish the draft.");
      });
    }
  }
  const agent = new Publisher({ context: Context.forSession(store, "s"), approveToolCall: () => (asked++, true) });
  const error = await agent.go().then(
    () => undefined,
    (caught: unknown) => caught,
  );
  expect(asked).toBe(0);
  expect(RunPausedError.isInstance(error)).toBe(true);
  expect(error).toMatchObject({ kind: "lease-lost" });
  const runId = store.listRuns().at(-1)!.runId;
  expect(store.readNodes("s").find((node) => node.id === runId)!.metadata["awaitingApproval"]).toBeUndefined();
  expect(store.getRun(runId)).toMatchObject({ state: "running", owned: true, leaseEpoch: 2 });
});

test.each([
  ["returns", false],
  ["fails", true],
])("a run that %s after another worker claimed it records nothing and ends lease-lost, with the refusal as its cause", async (_, fails) => {
  const store = new InMemorySessionStore();
  store.createSession("s");
  class Late extends Agent {
    static methodOptions = { go: { resumable: { leaseMs: 100 } } };
    async go(): Promise<string> {
      const runId = store.listRuns().at(-1)!.runId;
      // Stuck past its lease with no step to write: the run's own closing write is the first to be refused.
      while (store.getRun(runId)!.leaseUntil! >= Date.now()) stall(5);
      expect(store.claimRun(runId, ["running"], 30_000, 1)).toBe(true);
      if (fails) throw new Error("late failure");
      return "late result";
    }
  }
  const error = await new Late({ context: Context.forSession(store, "s") }).go().then(
    () => undefined,
    (caught: unknown) => caught,
  );
  expect(RunPausedError.isInstance(error)).toBe(true);
  expect(error).toMatchObject({ kind: "lease-lost" });
  expect((error as Error).cause).toMatchObject({ name: "LeaseLostError", heldEpoch: 1, currentEpoch: 2 });
  const runId = store.listRuns().at(-1)!.runId;
  const node = store.readNodes("s").find((found) => found.id === runId)!;
  expect(node.output).toBeUndefined();
  expect(node.metadata).toMatchObject({ status: "running" });
  expect(node.metadata["error"]).toBeUndefined();
  expect(store.getRun(runId)).toMatchObject({ state: "running", owned: true, leaseEpoch: 2 });
});
