/**
 * The lease take-over every store must survive, as one jest suite run
 * against each store (in-memory and SQLite from `lease-fence.test.ts`,
 * Postgres from `store-postgres/postgres-lease-fence.test.ts`): worker A's
 * step outlives its lease, worker B claims the run with `resumeRun` and
 * finishes it, and A's late write is refused by the store — B's result
 * stands. Worker B is a second copy of `@rein/core` (and of `@rein/guard`
 * below it), loaded with `jest.isolateModules`: its own runs, agents and
 * writers, as another process has.
 *
 * Test-only code (it calls jest's globals), left out of the package build.
 * @internal
 */
import * as core from "../../index";

type Core = typeof core;

/** A store that keeps resumable runs. */
export type LeaseStore = core.SessionStoreLike & core.RunLeaseStore;

/** Worker B: a fresh copy of @rein/core. */
function loadAnotherWorker(): Core {
  let copy: Core | undefined;
  jest.isolateModules(() => {
    copy = require("../../index") as Core;
  });
  return copy!;
}

/** The resumable agent both workers run: one source, so one code version; `work` is what the "work" step does in that worker. */
function jobClass(rein: Core, work: (text: string) => Promise<string>) {
  return class Job extends rein.Agent {
    // Long enough that a loaded machine renews it in time; A loses it only by stalling on purpose.
    static methodOptions = { process: { resumable: { leaseMs: 2_000 } } };
    async process(input: string): Promise<string> {
      const fetched = await rein.step("fetch", async (url: string) => `fetched ${url}`, input);
      const worked = await rein.step("work", work, fetched);
      return `${worked} (${input})`;
    }
  };
}

/** Blocks this thread, as a worker whose event loop is stuck does (no timer runs: no lease renewal). */
const stall = (ms: number): void => void Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, ms);

/**
 * Declares the take-over test for the stores `open` makes: worker A's and
 * worker B's (the same object for a store one process holds, like the
 * in-memory one; two stores on one database otherwise). B's store must
 * answer synchronously (no `asyncLeases`): both workers share this
 * process, and a claim on a pool would need the event loop A's stall holds. `open` is given
 * B's copy of core, to build B's store from it where that matters. Both
 * are closed after the test.
 * @internal
 */
export function describeLeaseTakeover(name: string, open: (workerB: Core) => [LeaseStore, LeaseStore] | Promise<[LeaseStore, LeaseStore]>): void {
  describe(`${name}: lease-fenced writes of a resumable run`, () => {
    let stores: LeaseStore[] = [];
    afterEach(() => {
      for (const store of new Set(stores.reverse())) store.close();
      stores = [];
    });

    test("worker A's lease expires mid-step, worker B claims the run with resumeRun and completes it; A's late write is refused with LeaseLostError and B's result stands", async () => {
      const workerB = loadAnotherWorker();
      const [storeA, storeB] = await open(workerB);
      stores = [storeA, storeB];
      storeA.createSession("s");
      const JobB = jobClass(workerB, async (text) => `B's work on ${text}`);
      const agentB = new JobB({ context: workerB.Context.forSession(storeB, "s") });
      let runId = "";
      let finishedByB: Promise<unknown> | undefined;
      let seenAfterClaim: core.RunRecord | undefined;
      const JobA = jobClass(core, async (text) => {
        runId = storeA.listRuns().at(-1)!.runId;
        // Worker A's event loop is stuck past its lease: nothing renews it.
        while (storeA.getRun(runId)!.leaseUntil! >= Date.now()) stall(5);
        // Meanwhile worker B takes the run over. B's store answers synchronously, so the claim is made within
        // resumeRun's first microtasks, before any timer of A's (its overdue lease renewal) can run.
        finishedByB = agentB.resumeRun(runId);
        for (let turn = 0; turn < 1_000 && storeB.getRun(runId)!.leaseEpoch !== 2; turn++) await null;
        seenAfterClaim = storeB.getRun(runId);
        await finishedByB;
        return `A's work on ${text}`;
      });
      const agentA = new JobA({ context: core.Context.forSession(storeA, "s") });

      const errorA = await agentA.process("report").then(
        () => undefined,
        (error: unknown) => error,
      );

      expect(seenAfterClaim).toMatchObject({ state: "running", owned: true, leaseEpoch: 2 });
      expect(await finishedByB).toBe("B's work on fetched report (report)");
      // A's late write was refused by the store: the attempt stopped, with the refusal as its cause.
      expect(core.RunPausedError.isInstance(errorA)).toBe(true);
      expect(errorA).toMatchObject({ runId, kind: "lease-lost" });
      const refusal = (errorA as Error).cause;
      expect(core.LeaseLostError.isInstance(refusal)).toBe(true);
      expect(refusal).toMatchObject({ name: "LeaseLostError", runId, heldEpoch: 1, currentEpoch: 2 });
      // B's result stands, on the run's node and on the step's; A's version of the step never landed.
      const nodes = storeA.readNodes("s");
      expect(nodes.find((node) => node.id === runId)).toMatchObject({ output: "B's work on fetched report (report)", metadata: { status: "completed" } });
      const steps = nodes.filter((node) => node.caller === runId);
      expect(steps.map((node) => [node.metadata["step"], node.output, node.metadata["status"]])).toEqual([
        ["fetch", "fetched report", "completed"],
        ["work", "B's work on fetched report", "completed"],
      ]);
      expect(storeA.getRun(runId)).toMatchObject({ state: "completed", owned: false, leaseEpoch: 2, reason: null });
    });
  });
}
