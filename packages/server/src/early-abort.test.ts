/**
 * A cancel or a client hang-up that arrives while a run is still starting
 * (its key's run slot being taken, its session read): the run ends
 * cancelled and gives its slot back (found by an attack review, 2026-12-03;
 * both failed before `when-aborted.ts`).
 */
import { Agent, InMemorySessionStore, Runtime, ScriptedProvider, currentSignal, type SpendRefusal } from "rein";
import { InMemoryApiKeyStore } from "./auth";
import { createServer } from "./create-server";
import { serve } from "./serve";
import { Holder } from "./__fixtures__/spend-agents";
import { withUnsignedPolicyHeaders } from "./__fixtures__/unsigned-headers";

withUnsignedPolicyHeaders();

/** A key store whose startRun answers only when released (as a SQLite/Postgres key store under load answers late). */
class SlowStartKeys extends InMemoryApiKeyStore {
  gate: Promise<void> = Promise.resolve();
  entered!: () => void;
  reached = new Promise<void>((resolve) => (this.entered = resolve));
  override async startRun(id: string, holdId: string, now?: number): Promise<SpendRefusal | undefined> {
    this.entered();
    await this.gate;
    return super.startRun(id, holdId, now);
  }
}

/** A slow job that honours its run's signal: it ends when cancelled (checks `aborted` first), else after 3 s. */
class Worker extends Agent {
  async work(): Promise<string> {
    const signal = currentSignal();
    if (signal?.aborted === true) return "saw the cancel";
    await new Promise<void>((resolve) => {
      const timer = setTimeout(resolve, 3_000);
      signal?.addEventListener("abort", () => { clearTimeout(timer); resolve(); }, { once: true });
    });
    return "worked 3 s";
  }
}

describe("a cancel that lands while the run is starting", () => {
  it("POST /v1/runs/:id/cancel answered 'cancelling' while the key's slot is being taken: the run answers cancelled", async () => {
    const keys = new SlowStartKeys();
    const { key } = await keys.create({ name: "capped", scopes: ["run", "read"], caps: { concurrentRuns: 2 } });
    const auth = { authorization: `Bearer ${key}` };
    let release!: () => void;
    keys.gate = new Promise((resolve) => (release = resolve));
    const app = createServer({ entries: { work: [Worker, "work"] }, store: new InMemorySessionStore(), mintRootBudget: true, auth: { keys } });
    const running = app.request("/v1/agent/run", { method: "POST", headers: { ...auth, "content-type": "application/json", "x-run-id": "early-cancel-1" }, body: JSON.stringify({ entry: "work" }) });
    await keys.reached;
    const cancel = await app.request("/v1/runs/early-cancel-1/cancel", { method: "POST", headers: auth });
    expect(cancel.status).toBe(200);
    expect(await cancel.json()).toMatchObject({ status: "cancelling" });
    release();
    const answer = (await (await running).json()) as { status: string; result: unknown };
    // docs/server.md: POST /v1/runs/:id/cancel → { status: "cancelling" }; "the run answers status: \"cancelled\"".
    expect({ status: answer.status, result: answer.result }).toEqual({ status: "cancelled", result: null });
  });
});

describe("a client that hangs up while its key's run slot is being taken", () => {
  it("the run is cancelled and gives its slot back (docs: a client that hangs up cancels its run)", async () => {
    const keys = new SlowStartKeys();
    const { key, record } = await keys.create({ name: "capped", scopes: ["run", "read"], caps: { concurrentRuns: 1 } });
    const auth = { authorization: `Bearer ${key}` };
    let release!: () => void;
    keys.gate = new Promise((resolve) => (release = resolve));
    // Holder (the suite's own fixture): an agent that runs until its run's signal aborts.
    const app = createServer({ entries: { hold: [Holder, "hold"] }, store: new InMemorySessionStore(), mintRootBudget: true, auth: { keys } });
    const server = await serve({ app, warn: () => undefined, resumeInterrupted: false, graceMs: 300 });
    try {
      const client = new AbortController();
      const running = fetch(`${server.url}/v1/agent/run`, { method: "POST", headers: { ...auth, "content-type": "application/json", "x-run-id": "hangup-run-1" }, body: JSON.stringify({ entry: "hold" }), signal: client.signal }).catch((error: Error) => error.name);
      await keys.reached;
      client.abort();
      expect(await running).toBe("AbortError");
      // The server has seen the hang-up (the request's signal aborted) before the key store answers.
      await new Promise((resolve) => setTimeout(resolve, 100));
      release();
      await new Promise((resolve) => setTimeout(resolve, 300));
      // A cancel by its id (unfixed: answers "cancelling", and does not end it).
      await fetch(`${server.url}/v1/runs/hangup-run-1/cancel`, { method: "POST", headers: auth });
    } finally {
      await server.close();
    }
    const after = { runsInFlight: ((await (await app.request("/healthz")).json()) as { runs: number }).runs, activeRuns: (await keys.spendOf(record.id))?.activeRuns };
    // A client that hangs up cancels its run; close() cancels what is left: nothing stays in flight, the key's slot is free.
    expect(after).toEqual({ runsInFlight: 0, activeRuns: 0 });
  }, 15_000);
});
