/// <reference types="jest" />
/**
 * The store contract, part three: run leases and the lease fencing of
 * writes (see `session-store-contract.ts`).
 * @internal
 */
import { SessionNodeWriter } from "./session-node-writer";
import { isRunLeaseStore, type RunLeaseStore } from "./run-leases";
import { LeaseLostError, SessionStoreError } from "./session-errors";
import { node, append, thrownBy, type StoreUnderTest } from "./session-store-contract-helpers";

/** Declares this part of the contract on the suite's store. @internal */
export function describeLeasesContract(context: StoreUnderTest): void {
  describe("run leases (resumable runs)", () => {
    const leases = (): RunLeaseStore => {
      expect(isRunLeaseStore(context.store)).toBe(true);
      return context.store as unknown as RunLeaseStore;
    };

    test("registerRun records a running run owned under a lease; getRun and listRuns (oldest first, narrowed by state) show it", () => {
      context.store.createSession("s1");
      const runs = leases();
      const before = Date.now();
      runs.registerRun("run-a", "s1", "Job.run", 30_000);
      runs.registerRun("run-b", "s1", "Job.other", 30_000);
      expect(runs.getRun("run-a")).toMatchObject({ runId: "run-a", sessionId: "s1", name: "Job.run", state: "running", reason: null, owned: true });
      expect(runs.getRun("run-a")!.leaseUntil!).toBeGreaterThanOrEqual(before + 30_000);
      expect(runs.listRuns().map((run) => run.runId)).toEqual(["run-a", "run-b"]);
      expect(runs.listRuns(["completed"])).toEqual([]);
      expect(runs.getRun("no-such-run")).toBeUndefined();
      expect(runs.claimRun("no-such-run", ["running"], 1_000)).toBe(false);
    });

    test("registerRun of a run id already registered is refused with a store error; the run, its lease and its epoch stand", () => {
      context.store.createSession("s1");
      const runs = leases();
      runs.registerRun("run-a", "s1", "Job.run", 30_000);
      runs.releaseRun("run-a", "interrupted", null);
      expect(runs.claimRun("run-a", ["interrupted"], 30_000)).toBe(true);
      const before = runs.getRun("run-a")!;
      expect(() => runs.registerRun("run-a", "s1", "Job.other", 30_000)).toThrow(expect.objectContaining({ name: expect.stringMatching(/StoreError$/) }));
      expect(runs.getRun("run-a")).toMatchObject({ name: "Job.run", state: "running", leaseEpoch: before.leaseEpoch });
    });

    test("the holder renews its lease; a release records the state and reason and frees the lease; a live lease cannot be claimed", () => {
      context.store.createSession("s1");
      const runs = leases();
      runs.registerRun("run-a", "s1", "Job.run", 30_000);
      expect(runs.claimRun("run-a", ["running"], 30_000)).toBe(false);
      expect(runs.renewRun("run-a", 60_000)).toBe(true);
      expect(runs.getRun("run-a")!.leaseUntil!).toBeGreaterThan(Date.now() + 30_000);
      runs.releaseRun("run-a", "paused", JSON.stringify({ kind: "pause", message: "asked to pause" }));
      expect(runs.getRun("run-a")).toMatchObject({ state: "paused", owned: false, leaseUntil: null, reason: '{"kind":"pause","message":"asked to pause"}' });
      expect(runs.renewRun("run-a", 30_000)).toBe(false);
      expect(runs.listRuns(["paused", "interrupted"]).map((run) => run.runId)).toEqual(["run-a"]);
      // A claim takes the run only from one of the states it names.
      expect(runs.claimRun("run-a", ["interrupted"], 30_000)).toBe(false);
      expect(runs.claimRun("run-a", ["paused"], 30_000)).toBe(true);
      expect(runs.getRun("run-a")).toMatchObject({ state: "running", owned: true, reason: null });
    });

    test("an expired lease can be claimed", async () => {
      context.store.createSession("s1");
      const runs = leases();
      runs.registerRun("run-a", "s1", "Job.run", 1);
      await new Promise((resolve) => setTimeout(resolve, 20));
      expect(runs.claimRun("run-a", ["running"], 30_000)).toBe(true);
      expect(runs.getRun("run-a")!.leaseUntil!).toBeGreaterThan(Date.now() + 20_000);
    });

    test("deleteSession deletes the session's runs; bad arguments are TypeErrors", () => {
      context.store.createSession("s1");
      context.store.createSession("s2");
      const runs = leases();
      runs.registerRun("run-a", "s1", "Job.run", 30_000);
      runs.registerRun("run-b", "s2", "Job.run", 30_000);
      context.store.deleteSession("s1");
      expect(runs.listRuns().map((run) => run.runId)).toEqual(["run-b"]);
      expect(() => runs.registerRun("", "s2", "Job.run", 30_000)).toThrow(TypeError);
      expect(() => runs.claimRun("run-b", ["running"], -1)).toThrow(TypeError);
      expect(() => runs.listRuns(["finished" as never])).toThrow(TypeError);
    });
  });

  describe("lease fencing (writes of a resumable run carry its lease's epoch)", () => {
    const leases = (): RunLeaseStore => {
      expect(isRunLeaseStore(context.store)).toBe(true);
      return context.store as unknown as RunLeaseStore;
    };
    /** Run `run-a` of session s1 with its node and one step node; worker A registered it (epoch 1), worker B claimed it (epoch 2). */
    const takenOver = (): RunLeaseStore => {
      context.store.createSession("s1");
      const runs = leases();
      context.store.commit("s1", [append(node("run-a", 0, { metadata: { status: "running" } })), append(node("step", 1, { caller: "run-a", metadata: { status: "running" } }))]);
      runs.registerRun("run-a", "s1", "Job.run", 30_000);
      runs.releaseRun("run-a", "interrupted", null, 1);
      expect(runs.claimRun("run-a", ["interrupted"], 30_000, 1)).toBe(true);
      return runs;
    };

    test("a run's lease epoch is 1 when registered and one more with every claim; a claim from an epoch the run has left is refused", () => {
      context.store.createSession("s1");
      const runs = leases();
      runs.registerRun("run-a", "s1", "Job.run", 30_000);
      expect(runs.getRun("run-a")).toMatchObject({ state: "running", leaseEpoch: 1 });
      runs.releaseRun("run-a", "paused", null, 1);
      // A release gives the lease up without a new epoch.
      expect(runs.getRun("run-a")).toMatchObject({ state: "paused", owned: false, leaseEpoch: 1 });
      // Claimed from an epoch the run is not at (someone claimed it since the claimant looked): refused, nothing changes.
      expect(runs.claimRun("run-a", ["paused"], 30_000, 2)).toBe(false);
      expect(runs.getRun("run-a")).toMatchObject({ state: "paused", owned: false, leaseEpoch: 1 });
      expect(runs.claimRun("run-a", ["paused"], 30_000, 1)).toBe(true);
      expect(runs.getRun("run-a")).toMatchObject({ state: "running", owned: true, leaseEpoch: 2 });
      runs.releaseRun("run-a", "interrupted", null, 2);
      // Without fromEpoch a claim works as before, and still counts.
      expect(runs.claimRun("run-a", ["interrupted"], 30_000)).toBe(true);
      expect(runs.listRuns().map((run) => [run.runId, run.leaseEpoch])).toEqual([["run-a", 3]]);
      expect(() => runs.claimRun("run-a", ["running"], 30_000, 0)).toThrow(TypeError);
      expect(() => runs.renewRun("run-a", 30_000, 1.5)).toThrow(TypeError);
      expect(() => context.store.commit("s1", [], { fences: [{ runId: "run-a", epoch: -1 }] })).toThrow(TypeError);
      expect(() => context.store.commit("s1", [], { fences: "run-a" as never })).toThrow(TypeError);
    });

    test("a commit fenced with the run's current epoch lands; one fenced with an epoch the run has left is refused whole with a LeaseLostError: none of its nodes land", () => {
      const runs = takenOver();
      // Worker B (epoch 2) finishes the run.
      context.store.commit(
        "s1",
        [
          { kind: "update", id: "step", fields: { output: "B", metadata: { status: "completed" } } },
          { kind: "update", id: "run-a", fields: { output: "B", metadata: { status: "completed" } } },
        ],
        { fences: [{ runId: "run-a", epoch: 2 }] },
      );
      runs.releaseRun("run-a", "completed", null, 2);
      // Worker A's late commit (epoch 1): an update of the step, a new node and the run's output. Nothing of it lands.
      const error = thrownBy(() =>
        context.store.commit(
          "s1",
          [
            { kind: "update", id: "step", fields: { output: "A", metadata: { status: "completed", by: "A" } } },
            append(node("late", 2, { caller: "step" })),
            { kind: "update", id: "run-a", fields: { output: "A" } },
          ],
          { fences: [{ runId: "run-a", epoch: 1 }] },
        ),
      );
      expect(LeaseLostError.isInstance(error)).toBe(true);
      expect(SessionStoreError.isInstance(error)).toBe(true);
      expect(error).toMatchObject({ name: "LeaseLostError", runId: "run-a", heldEpoch: 1, currentEpoch: 2, location: context.store.location });
      expect((error as Error).message).toMatch(/lease of run 'run-a': it wrote under lease epoch 1, but run 'run-a' is at lease epoch 2 .*Nothing of this write was stored/);
      expect(context.store.hasNode("s1", "late")).toBe(false);
      expect(context.store.readNodes("s1").map((stored) => [stored.id, stored.output, stored.metadata])).toEqual([
        ["run-a", "B", { status: "completed" }],
        ["step", "B", { status: "completed" }],
      ]);
      expect(context.store.getSession("s1")).toMatchObject({ nodeCount: 2, lastSeq: 1 });
      // One stale fence among several refuses the whole commit; a run the context.store does not hold refuses it too.
      const unknown = thrownBy(() => context.store.commit("s1", [append(node("x", 3))], { fences: [{ runId: "run-a", epoch: 2 }, { runId: "no-such-run", epoch: 1 }] }));
      expect(unknown).toMatchObject({ name: "LeaseLostError", runId: "no-such-run", heldEpoch: 1, currentEpoch: null });
      expect(context.store.hasNode("s1", "x")).toBe(false);
      context.store.commit("s1", [append(node("x", 3, { caller: "step" }))], { fences: [{ runId: "run-a", epoch: 2 }] });
      expect(context.store.hasNode("s1", "x")).toBe(true);
    });

    test("a renewal or a release under an epoch the run has left is refused: the release throws LeaseLostError and leaves the run as its holder has it", () => {
      const runs = takenOver();
      expect(runs.renewRun("run-a", 60_000, 1)).toBe(false);
      expect(runs.renewRun("run-a", 60_000, 2)).toBe(true);
      const error = thrownBy(() => runs.releaseRun("run-a", "completed", '{"by":"A"}', 1));
      expect(LeaseLostError.isInstance(error)).toBe(true);
      expect(error).toMatchObject({ runId: "run-a", heldEpoch: 1, currentEpoch: 2 });
      expect(runs.getRun("run-a")).toMatchObject({ state: "running", owned: true, reason: null, leaseEpoch: 2 });
      runs.releaseRun("run-a", "completed", null, 2);
      expect(runs.getRun("run-a")).toMatchObject({ state: "completed", owned: false, leaseEpoch: 2 });
    });

    test("a writer drops the writes made under a refused lease and commits the others; flush({ fence }) throws the LeaseLostError, also later", () => {
      takenOver();
      const stale = { runId: "run-a", epoch: 1 };
      const writer = new SessionNodeWriter(context.store, "s1", { batching: "manual", shared: false });
      writer.append({ id: "step-2", role: "code", name: "work", caller: "run-a", predecessor: "step", metadata: { status: "running", step: "work" } }, { fence: stale });
      writer.update("run-a", { output: "A" }, { fence: stale });
      // Another call's node in the same batch is not under the lease: it goes in.
      writer.append({ id: "note", role: "user", name: "user", input: "unfenced" });
      const error = thrownBy(() => writer.flush({ fence: stale }));
      expect(LeaseLostError.isInstance(error)).toBe(true);
      expect(error).toMatchObject({ runId: "run-a", heldEpoch: 1, currentEpoch: 2 });
      expect(writer.pending).toBe(0);
      expect(context.store.hasNode("s1", "note")).toBe(true);
      expect(context.store.hasNode("s1", "step-2")).toBe(false);
      // Writes made under the refused lease later are dropped when made; a flush without the fence does not throw.
      writer.update("run-a", { metadata: { status: "error" } }, { fence: stale });
      writer.append({ id: "step-3", role: "code", name: "work", caller: "run-a", metadata: { status: "running" } }, { fence: stale });
      expect(writer.pending).toBe(0);
      expect(() => writer.flush()).not.toThrow();
      expect(() => writer.flush({ fence: stale })).toThrow(LeaseLostError);
      // The holder's writes (epoch 2) go in.
      const holder = { runId: "run-a", epoch: 2 };
      writer.update("run-a", { output: "B" }, { fence: holder });
      writer.flush({ fence: holder });
      const stored = new Map(context.store.readNodes("s1").map((found) => [found.id, found]));
      expect([...stored.keys()]).toEqual(["run-a", "step", "note"]);
      expect(stored.get("run-a")).toMatchObject({ output: "B", metadata: { status: "running" } });
    });
  });
}
