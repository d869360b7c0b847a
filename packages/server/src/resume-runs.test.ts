import { spawn, type ChildProcess } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { Agent, encodePolicyHeader, SessionStore, type RunRecord } from "rein";
import { createServer } from "./create-server";
import { entryClassFor } from "./index";
import { Pipeline, pipelineCalls, pipelineFaults, resumableEntries } from "./__fixtures__/agents";

const ROOT = resolve(__dirname, "..", "..", "..");
let directory: string;
let store: SessionStore;
beforeEach(() => {
  directory = mkdtempSync(join(tmpdir(), "rein-server-resume-"));
  store = new SessionStore({ path: join(directory, "runs.db"), shutdownFlush: false });
  pipelineCalls.length = 0;
  pipelineFaults.failSecondOnce = false;
  pipelineFaults.waitForCancel = false;
});
afterEach(() => {
  store.close();
  rmSync(directory, { recursive: true, force: true });
});

const json = { "content-type": "application/json" };
const policy = { "X-Agent-Policy": encodePolicyHeader({ depth: 3 }) };

describe("resumable runs over HTTP", () => {
  it("GET /v1/runs lists a failed run; POST /v1/runs/:id/resume finishes it on its node without re-running finished steps", async () => {
    const app = createServer({ entries: resumableEntries, store });
    pipelineFaults.failSecondOnce = true;
    const failed = await app.request("/v1/agent/run", { method: "POST", headers: { ...json, ...policy }, body: JSON.stringify({ entry: "pipeline", args: ["hi"], sessionId: "jobs" }) });
    expect(await failed.json()).toMatchObject({ status: "error", error: { message: "the second step failed once" } });
    expect(pipelineCalls).toEqual(["upper", "exclaim"]);

    const listed = (await (await app.request("/v1/runs?state=error")).json()) as { runs: RunRecord[] };
    expect(listed.runs).toEqual([expect.objectContaining({ name: "Pipeline.process", state: "error", sessionId: "jobs" })]);
    const runId = listed.runs[0]!.runId;

    const resumed = await app.request(`/v1/runs/${runId}/resume`, { method: "POST", headers: policy });
    expect(resumed.status).toBe(200);
    expect(await resumed.json()).toMatchObject({ runId, status: "completed", result: "HI!", sessionId: "jobs", budget: { depth: 3 } });
    // The finished step returned its saved result; only the failed one ran again.
    expect(pipelineCalls).toEqual(["upper", "exclaim", "exclaim"]);
    expect(store.getRun(runId)).toMatchObject({ state: "completed" });
    expect(store.readNodes("jobs").filter((node) => node.name === "Pipeline.process")).toHaveLength(1);

    // A completed run cannot be resumed again: 409 naming why.
    const again = await app.request(`/v1/runs/${runId}/resume`, { method: "POST", headers: { ...json, ...policy }, body: JSON.stringify({ codeChangePolicy: "use_latest" }) });
    expect(again.status).toBe(409);
    expect(await again.json()).toMatchObject({ error: { type: "run_conflict" } });
  });

  it("bad requests are typed 4xx: unknown run, unknown field, bad policy name, unknown state, missing X-Agent-Policy", async () => {
    const app = createServer({ entries: resumableEntries, store });
    pipelineFaults.failSecondOnce = true;
    await app.request("/v1/agent/run", { method: "POST", headers: { ...json, ...policy }, body: JSON.stringify({ entry: "pipeline", args: ["x"], sessionId: "jobs" }) });
    const runId = store.listRuns()[0]!.runId;
    const cases: [string, RequestInit, number, string][] = [
      ["/v1/runs/no-such-run-id/resume", { method: "POST", headers: policy }, 404, "not_found"],
      [`/v1/runs/${runId}/resume`, { method: "POST", headers: { ...json, ...policy }, body: JSON.stringify({ force: true }) }, 400, "invalid_body"],
      [`/v1/runs/${runId}/resume`, { method: "POST", headers: { ...json, ...policy }, body: JSON.stringify({ codeChangePolicy: "newest" }) }, 400, "invalid_body"],
      [`/v1/runs/${runId}/resume`, { method: "POST", headers: { ...json, ...policy }, body: "{not json" }, 400, "invalid_body"],
      [`/v1/runs/${runId}/resume`, { method: "POST" }, 400, "missing_policy"],
      ["/v1/runs?state=running,bogus", { method: "GET" }, 400, "invalid_body"],
    ];
    for (const [path, init, status, type] of cases) {
      const response = await app.request(path, init);
      expect([path, response.status]).toEqual([path, status]);
      expect(await response.json()).toMatchObject({ error: { type } });
    }
    // Nothing above touched the run.
    expect(store.getRun(runId)).toMatchObject({ state: "error" });
  });

  it("a resume is cancelled through the X-Run-Id the client chose, and a reach refusal is a 403 as for a run", async () => {
    const app = createServer({ entries: resumableEntries, store });
    pipelineFaults.failSecondOnce = true;
    await app.request("/v1/agent/run", { method: "POST", headers: { ...json, ...policy }, body: JSON.stringify({ entry: "pipeline", args: ["hi"], sessionId: "jobs" }) });
    const runId = store.listRuns()[0]!.runId;

    pipelineFaults.waitForCancel = true;
    const resuming = app.request(`/v1/runs/${runId}/resume`, { method: "POST", headers: { ...policy, "X-Run-Id": "resume-request-1" } });
    for (let i = 0; i < 800 && pipelineCalls.length < 3; i++) await new Promise((r) => setTimeout(r, 5));
    const cancel = await app.request("/v1/runs/resume-request-1/cancel", { method: "POST" });
    expect(cancel.status).toBe(200);
    const answer = await resuming;
    expect(answer.headers.get("x-run-id")).toBe("resume-request-1");
    expect(await answer.json()).toMatchObject({ runId, status: "cancelled" });
    expect(store.getRun(runId)).toMatchObject({ state: "cancelled" });

    // The budget's deadline has passed: the resumed entry is refused by reach, answered 403 as /v1/agent/run answers it.
    pipelineFaults.waitForCancel = false;
    const late = await app.request(`/v1/runs/${runId}/resume`, { method: "POST", headers: { "X-Agent-Policy": encodePolicyHeader({ depth: 3, deadline: Date.now() - 1_000 }) } });
    expect(late.status).toBe(403);
    expect(await late.json()).toMatchObject({ runId, status: "error", error: { type: "reach_exceeded" } });
  });

  it("a run whose class no listed entry serves is a 404 naming the class", async () => {
    pipelineFaults.failSecondOnce = true;
    await createServer({ entries: resumableEntries, store }).request("/v1/agent/run", {
      method: "POST",
      headers: { ...json, ...policy },
      body: JSON.stringify({ entry: "pipeline", args: ["x"], sessionId: "jobs" }),
    });
    const runId = store.listRuns()[0]!.runId;
    const other = createServer({ entries: { research: resumableEntries.research }, store });
    const response = await other.request(`/v1/runs/${runId}/resume`, { method: "POST", headers: policy });
    expect(response.status).toBe(404);
    expect(await response.json()).toMatchObject({ error: { type: "not_found", message: expect.stringContaining("Pipeline.process") } });
  });
});

function startServer(storePath: string, env: NodeJS.ProcessEnv): { child: ChildProcess; url: Promise<string>; lines: string[]; exited: Promise<number | null> } {
  // One process (no tsx wrapper), so SIGKILL kills the server itself.
  const child = spawn(process.execPath, ["--require", require.resolve("tsx/cjs"), join(__dirname, "__fixtures__", "resume-server.ts")], {
    cwd: ROOT,
    env: { ...process.env, TSX_TSCONFIG_PATH: join(ROOT, "tsconfig.test.json"), STORE: storePath, ...env },
    stdio: ["ignore", "pipe", "inherit"],
  });
  const lines: string[] = [];
  let buffered = "";
  let listening: (url: string) => void = () => undefined;
  const url = new Promise<string>((resolveUrl) => (listening = resolveUrl));
  child.stdout!.on("data", (chunk: Buffer) => {
    buffered += chunk.toString();
    const parts = buffered.split("\n");
    buffered = parts.pop()!;
    for (const line of parts) {
      lines.push(line);
      if (line.startsWith("listening ")) listening(line.slice("listening ".length));
    }
  });
  const exited = new Promise<number | null>((done) => child.once("close", (code) => done(code)));
  return { child, url, lines, exited };
}

test("a server started after its predecessor was killed mid-run continues the run on start: finished steps are not run again", async () => {
  const storePath = join(directory, "shared.db");
  const first = startServer(storePath, { PIPELINE_HANG: "1" });
  const base = await first.url;
  void fetch(`${base}/v1/agent/run`, { method: "POST", headers: json, body: JSON.stringify({ entry: "pipeline", args: ["hi"], sessionId: "jobs" }) }).catch(() => undefined);
  // Wait until the run is inside its second step (the first one is saved).
  const observer = new SessionStore({ path: storePath, shutdownFlush: false });
  try {
    for (let i = 0; i < 200; i++) {
      const steps = observer.hasSession("jobs") ? observer.readNodes("jobs").filter((node) => node.metadata["step"] !== undefined) : [];
      if (steps.some((node) => node.metadata["step"] === "exclaim")) break;
      await new Promise((r) => setTimeout(r, 25));
    }
  } finally {
    observer.close();
  }
  first.child.kill("SIGKILL");
  await first.exited;

  const second = startServer(storePath, {});
  await second.url;
  for (let i = 0; i < 400 && second.lines.length < 2; i++) await new Promise((r) => setTimeout(r, 25));
  second.child.kill("SIGTERM");
  await second.exited;
  const { report, calls } = JSON.parse(second.lines[1]!) as { report: { resumed: { status: string; result: unknown; name: string }[]; leftAlone: unknown[] }; calls: string[] };
  expect(report.resumed).toEqual([expect.objectContaining({ name: "Pipeline.process", status: "completed", result: "HI!" })]);
  expect(report.leftAlone).toEqual([]);
  // In the new process only the unfinished step ran.
  expect(calls).toEqual(["exclaim"]);
}, 60_000); // sized for a loaded 2-core machine

test("entryClassFor finds the class entry of a run by its name (subclasses too) and passes over anything else a module lists", () => {
  class Special extends Pipeline {}
  const entries = { odd: 42, text: "x", factory: [() => ({}), "process"], special: [Special, "process"] } as never;
  expect(entryClassFor(entries, "Pipeline.process")).toBe(Special);
  expect(entryClassFor(entries, "Pipeline.missing")).toBeUndefined();
  expect(entryClassFor(entries, "Other.process")).toBeUndefined();
});

test("entryClassFor matches a run by its class's durable id: two classes named Pipeline are told apart, and a minified one is found by its id", () => {
  const billing = class Pipeline extends Agent {
    static id = "billing.Pipeline";
    process(): string {
      return "billing";
    }
  };
  const shipping = class Pipeline extends Agent {
    static id = "shipping.Pipeline";
    process(): string {
      return "shipping";
    }
  };
  Object.defineProperty(shipping, "name", { value: "t" });
  const entries = { bill: [billing, "process"], ship: [shipping, "process"] } as never;
  expect(entryClassFor(entries, "billing.Pipeline.process")).toBe(billing);
  expect(entryClassFor(entries, "shipping.Pipeline.process")).toBe(shipping);
  expect(entryClassFor(entries, "Pipeline.process")).toBeUndefined();
  expect(entryClassFor(entries, "t.process")).toBeUndefined();
});
