import { hostname } from "node:os";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import Database from "libsql";
import { Agent } from "../agent/agent";
import { Context } from "../context/context";
import { currentSignal } from "../scope/call-scope";
import { currentReach, withReachBudget } from "../runtime/reach";
import { withRunListener } from "../runtime/run-listener";
import type { RunEvent } from "../runtime/runtime-events";
import { SessionStore } from "@rein/session";
import { InMemorySessionStore } from "@rein/session";
import { RunPausedError } from "./resumable-errors";
import { resumeInterrupted } from "./resume-run";
import { step } from "./step";

let directory: string;
const opened: SessionStore[] = [];
beforeEach(() => {
  directory = mkdtempSync(join(tmpdir(), "rein-resume-seams-"));
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

/** What the second step saw of its caller's scope, attempt by attempt. */
const seen: { depthLimit?: number; tokensLimit?: number; signal: boolean }[] = [];
let failOnce = false;
let waitForAbort = false;

class Seams extends Agent {
  static methodOptions = { go: { resumable: true } };
  async go(text: string): Promise<string> {
    const first = await step("first", async (value: string) => `${value}+1`, text);
    return step("second", async (value: string) => {
      const reach = currentReach();
      seen.push({ depthLimit: reach?.depth.limit, tokensLimit: reach?.tokens.limit, signal: currentSignal() !== undefined });
      if (failOnce) {
        failOnce = false;
        throw new Error("second failed");
      }
      const signal = currentSignal();
      if (waitForAbort && signal !== undefined && !signal.aborted) await new Promise<void>((resolve) => signal.addEventListener("abort", () => resolve(), { once: true }));
      signal?.throwIfAborted();
      return `${value}+2`;
    }, first);
  }
}

beforeEach(() => {
  seen.length = 0;
  failOnce = false;
  waitForAbort = false;
});

async function failedRun(store: SessionStore): Promise<{ agent: Seams; runId: string }> {
  const agent = new Seams({ context: Context.forSession(store, "s") });
  failOnce = true;
  await expect(agent.go("x")).rejects.toThrow("second failed");
  return { agent, runId: store.listRuns().at(-1)!.runId };
}

test("a resume runs under its caller's reach budget, run listener and cancellation signal, as a first attempt does", async () => {
  const store = fileStore();
  const { agent, runId } = await failedRun(store);
  const events: RunEvent[] = [];
  const controller = new AbortController();
  const result = await withRunListener((event) => events.push(event), () => withReachBudget({ depth: 2, tokens: 100 }, () => agent.resumeRun(runId)), {
    signal: controller.signal,
  });
  expect(result).toBe("x+1+2");
  // First attempt: no budget, no signal. The resume: the caller's.
  expect(seen).toEqual([
    { depthLimit: undefined, tokensLimit: undefined, signal: false },
    { depthLimit: 2, tokensLimit: 100, signal: true },
  ]);
  expect(events.filter((event) => event.type === "node" && event.name === "Seams.go").map((event) => (event as { phase: string }).phase)).toEqual(["start", "end"]);
});

test("cancelling the caller's signal cancels a resumed run: it ends cancelled, resumable again", async () => {
  const store = fileStore();
  const { agent, runId } = await failedRun(store);
  waitForAbort = true;
  const controller = new AbortController();
  const resuming = withRunListener(() => undefined, () => agent.resumeRun(runId), { signal: controller.signal });
  for (let i = 0; i < 400 && seen.length < 2; i++) await new Promise((r) => setTimeout(r, 5));
  controller.abort(new Error("client went away"));
  await expect(resuming).rejects.toThrow();
  expect(store.getRun(runId)).toMatchObject({ state: "cancelled" });
  waitForAbort = false;
  expect(await agent.resumeRun(runId)).toBe("x+1+2");
});

test("a worker that lost its run's lease (another worker claimed it while this one stalled) starts no further step and writes nothing", async () => {
  const store = fileStore();
  const other = new SessionStore({ path: join(directory, "runs.db"), shutdownFlush: false });
  opened.push(other);
  let laterSteps = 0;
  class Stalling extends Agent {
    static methodOptions = { go: { resumable: { leaseMs: 200 } } };
    async go(): Promise<string> {
      await step("stall", async () => {
        // This worker's event loop stalls past its lease; meanwhile another worker takes the run.
        const until = Date.now() + 300;
        while (Date.now() < until);
        expect(other.claimRun(other.listRuns().at(-1)!.runId, ["running"], 30_000)).toBe(true);
        return 1;
      });
      // The lease renewal that comes next is refused.
      await new Promise((r) => setTimeout(r, 150));
      return step("later", async () => (laterSteps++, "done"));
    }
  }
  const error = await new Stalling({ context: Context.forSession(store, "s") }).go().catch((caught: unknown) => caught);
  expect(RunPausedError.isInstance(error)).toBe(true);
  expect(error).toMatchObject({ kind: "lease-lost" });
  expect(laterSteps).toBe(0);
  // The run stays the other worker's: still running under its lease, its node not marked by this one.
  const runId = other.listRuns().at(-1)!.runId;
  expect(other.getRun(runId)).toMatchObject({ state: "running", owned: true });
  expect(other.readNodes("s").find((node) => node.id === runId)!.metadata["status"]).toBe("running");
});

test("a lease held under this host and pid by a store not open in this process (an earlier process with the same pid) is free", async () => {
  const store = fileStore();
  const { runId } = await failedRun(store);
  // As a container restarted as pid 1 finds it: the earlier process had this pid; its lease has not expired.
  const db = new Database(join(directory, "runs.db"));
  try {
    db.prepare("UPDATE rein_runs SET state = 'running', owner_host = ?, owner_pid = ?, owner_store = ?, lease_until = ? WHERE run_id = ?").run(
      hostname(),
      process.pid,
      "store-of-an-earlier-process",
      Date.now() + 60_000,
      runId,
    );
  } finally {
    db.close();
  }
  expect(store.claimRun(runId, ["running"], 30_000)).toBe(true);
  // A lease of a store open here stays held: another store on the file cannot take it.
  const other = new SessionStore({ path: join(directory, "runs.db"), shutdownFlush: false });
  opened.push(other);
  expect(other.claimRun(runId, ["running"], 30_000)).toBe(false);
});

test("a store fault while looking at one interrupted run is reported for that run; the others still continue", async () => {
  const store = new InMemorySessionStore();
  store.createSession("a");
  store.createSession("b");
  const interrupted: string[] = [];
  for (const session of ["a", "b"]) {
    const agent = new Seams({ context: Context.forSession(store, session) });
    failOnce = true;
    await expect(agent.go(session)).rejects.toThrow("second failed");
    const runId = store.listRuns().at(-1)!.runId;
    // As a host going away leaves it: interrupted.
    expect(store.claimRun(runId, ["error"], 1000)).toBe(true);
    store.releaseRun(runId, "interrupted", null);
    interrupted.push(runId);
  }
  const readAncestry = store.readAncestry.bind(store);
  store.readAncestry = (sessionId, nodeId, options) => {
    if (sessionId === "a") throw new Error("disk I/O error");
    return readAncestry(sessionId, nodeId, options);
  };
  const keep = [new Seams({ context: Context.forSession(store, "a") }), new Seams({ context: Context.forSession(store, "b") })];
  const report = await resumeInterrupted({ store });
  expect(report.leftAlone).toEqual([{ runId: interrupted[0], name: "Seams.go", reason: "error", message: expect.stringContaining("disk I/O error") }]);
  expect(report.resumed).toEqual([expect.objectContaining({ runId: interrupted[1], status: "completed", result: "b+1+2" })]);
  expect(keep).toHaveLength(2);
});
