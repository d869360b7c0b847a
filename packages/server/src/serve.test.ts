import { InMemorySessionStore, encodePolicyHeader } from "rein";
import { createServer } from "./create-server";
import { serve, type RunningServer } from "./serve";
import { entries } from "./__fixtures__/agents";
import { withUnsignedPolicyHeaders } from "./__fixtures__/unsigned-headers";
import type { BackgroundQueue } from "./background/background-queue";

withUnsignedPolicyHeaders();

interface Frame {
  event?: string;
  data?: string;
  comment?: string;
}

function parseSse(text: string): Frame[] {
  return text
    .split("\n\n")
    .filter((block) => block.length > 0)
    .map((block) => {
      const frame: Frame = {};
      for (const line of block.split("\n")) {
        if (line.startsWith(":")) frame.comment = line.slice(1).trim();
        else if (line.startsWith("event: ")) frame.event = line.slice(7);
        else if (line.startsWith("data: ")) frame.data = line.slice(6);
      }
      return frame;
    });
}

function run(server: RunningServer, body: unknown, headers: Record<string, string> = {}) {
  return fetch(`${server.url}/v1/agent/run`, {
    method: "POST",
    headers: { "content-type": "application/json", "X-Agent-Policy": encodePolicyHeader({ depth: 3 }), ...headers },
    body: JSON.stringify(body),
  });
}

describe("SSE over a real socket", () => {
  let server: RunningServer;
  beforeAll(async () => {
    server = await serve({ app: createServer({ entries, heartbeatMs: 20 }), port: 0 });
  });
  afterAll(() => server.close());

  it("one data: line per RunEvent (JSON), event: run-finish last with the result", async () => {
    const response = await run(server, { entry: "stream", task: "task-sse" }, { accept: "text/event-stream" });
    expect(response.status).toBe(200);
    expect(response.headers.get("content-type")).toContain("text/event-stream");
    expect(response.headers.get("x-run-id")).toMatch(/.{8,}/);
    const frames = parseSse(await response.text()).filter((frame) => frame.comment === undefined);
    const events = frames.slice(0, -1).map((frame) => JSON.parse(frame.data!) as { type: string; agent: string });
    expect(frames.slice(0, -1).every((frame) => frame.event === undefined)).toBe(true);
    expect(events.map((event) => event.type)).toEqual(expect.arrayContaining(["run-start", "model-request", "model-response", "run-finish"]));
    expect(events.every((event) => event.agent === "Researcher")).toBe(true);
    const last = frames.at(-1)!;
    expect(last.event).toBe("run-finish");
    expect(JSON.parse(last.data!)).toMatchObject({ result: "answer about task-sse", status: "completed", usage: { inputTokens: 7, outputTokens: 3 } });
  });

  it("heartbeat comments while a run is quiet (interval configurable)", async () => {
    // ~50 heartbeat periods: at least two fire however loaded the machine.
    const response = await run(server, { entry: "sleep", args: [1_000] }, { accept: "text/event-stream" });
    const frames = parseSse(await response.text());
    expect(frames.filter((frame) => frame.comment === "heartbeat").length).toBeGreaterThanOrEqual(2);
    expect(frames.at(-1)).toMatchObject({ event: "run-finish" });
    expect(JSON.parse(frames.at(-1)!.data!)).toMatchObject({ result: "woke", status: "completed" });
  });

  it("a request error before the run is JSON 4xx even when SSE was asked for", async () => {
    const response = await run(server, { entry: "nope" }, { accept: "text/event-stream" });
    expect(response.status).toBe(404);
    expect(await response.json()).toMatchObject({ error: { type: "not_found" } });
  });

  it("cancel through the X-Run-Id header of an SSE response: run-finish says cancelled", async () => {
    const response = await run(server, { entry: "sleep", args: [5000] }, { accept: "text/event-stream" });
    const runId = response.headers.get("x-run-id")!;
    const cancel = await fetch(`${server.url}/v1/runs/${runId}/cancel`, { method: "POST" });
    expect(cancel.status).toBe(200);
    const frames = parseSse(await response.text());
    expect(JSON.parse(frames.at(-1)!.data!)).toMatchObject({ runId, status: "cancelled" });
  });
});

describe("graceful shutdown", () => {
  it("close() stops accepting, waits the grace period, cancels runs in flight, marks running nodes interrupted, and leaves a given store open", async () => {
    const store = new InMemorySessionStore();
    // A grace period far longer than the quick run, and a nap that only the cancel after it ends: sized for a loaded machine.
    // The quick run sleeps 2 s so it is still in flight when the poll below sees it (a 150 ms sleep could end before a
    // loaded machine answered the poll, and the poll then waited for a second run for ever).
    const server = await serve({ app: createServer({ entries, store }), port: 0, graceMs: 10_000 });
    const inFlight = async () => ((await (await fetch(`${server.url}/healthz`)).json()) as { runs: number }).runs;
    const stuck = run(server, { entry: "nap", args: [600_000], sessionId: "stuck" });
    while ((await inFlight()) < 1) await new Promise((r) => setTimeout(r, 5));
    const quick = run(server, { entry: "sleep", args: [2_000], sessionId: "quick" });
    // Both runs in flight before close() (the test's timeout bounds the wait).
    while ((await inFlight()) < 2) await new Promise((r) => setTimeout(r, 5));
    const closing = server.close();
    // the quick run finishes within the grace period; the stuck one is cancelled after it (its ten-minute nap ends on that cancel)
    expect(await (await quick).json()).toMatchObject({ result: "woke", status: "completed" });
    const stuckResponse = await stuck;
    expect(await stuckResponse.json()).toMatchObject({ status: "cancelled", sessionId: "stuck" });
    await closing;
    const sleeping = store.readNodes("stuck").find((node) => node.name === "Sleeper.sleep")!;
    expect(sleeping.metadata["status"]).toBe("interrupted");
    // the store given to the server is still open
    expect(store.hasSession("quick")).toBe(true);
    await expect(fetch(`${server.url}/healthz`)).rejects.toThrow();
  });
});

describe("graceful shutdown of the streams that only watch", () => {
  it("close() ends the runs feed and a background run's event stream once no run is in flight, without waiting the grace period for them", async () => {
    // A background run that stays running: its event stream would follow it for ever.
    const runId = "3d6f0a52-8c1e-4b7a-9f20-5e4c1d2b7a90";
    const job = { runId, entry: "research", args: ["x"], sessionId: "s1", storedSessionId: "s1", owner: "", budget: { depth: 2 } };
    const queue: BackgroundQueue = {
      send: async () => undefined,
      get: async () => ({ job, state: "running" }),
      work: async () => undefined,
      stop: async () => undefined,
      channel: { append: async () => undefined, read: async () => [], follow: () => () => undefined, control: async () => true, controlsOf: async () => [], onControl: () => () => undefined, close: async () => undefined },
    };
    // A ten-minute grace period: a close() that waited it for the streams would outlast the test's timeout.
    const server = await serve({ app: createServer({ entries, store: new InMemorySessionStore(), queue }), port: 0, graceMs: 600_000 });
    const feed = await fetch(`${server.url}/v1/runs/events`, { headers: { accept: "text/event-stream" } });
    const follow = await fetch(`${server.url}/v1/runs/${runId}/events`);
    expect([feed.status, follow.status]).toEqual([200, 200]);
    const [feedText, followText] = [feed.text(), follow.text()];
    await server.close();
    // Each stream ended cleanly (no run-end: the run goes on; a client reconnects elsewhere with Last-Event-ID).
    expect(parseSse(await feedText).map((frame) => frame.event)).toEqual(["snapshot"]);
    expect(parseSse(await followText).filter((frame) => frame.event !== undefined)).toEqual([]);
    await expect(fetch(`${server.url}/healthz`)).rejects.toThrow();
  });

  it("a run that close() cancels shows on the runs feed as cancelled before the feed ends", async () => {
    const server = await serve({ app: createServer({ entries, store: new InMemorySessionStore() }), port: 0, graceMs: 100 });
    const feed = await fetch(`${server.url}/v1/runs/events`, { headers: { accept: "text/event-stream" } });
    const feedText = feed.text();
    const inFlight = async () => ((await (await fetch(`${server.url}/healthz`)).json()) as { runs: number }).runs;
    const stuck = run(server, { entry: "nap", args: [600_000], sessionId: "stuck" }, { "x-run-id": "run-stuck-at-close" });
    while ((await inFlight()) < 1) await new Promise((r) => setTimeout(r, 5));
    await server.close();
    expect(await (await stuck).json()).toMatchObject({ status: "cancelled" });
    const runs = parseSse(await feedText)
      .filter((frame) => frame.event === "run")
      .map((frame) => (JSON.parse(frame.data!) as { run: { runId: string; status: string } }).run);
    expect(runs.at(-1)).toMatchObject({ runId: "run-stuck-at-close", status: "cancelled" });
  });
});

describe("serve({ entries, port })", () => {
  it("builds the app from createServer's options, serves the entries, and closes the store it created", async () => {
    const server = await serve({ entries, mintRootBudget: true, port: 0 });
    try {
      const response = await fetch(`${server.url}/v1/agent/run`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ entry: "add", args: [2, 3] }),
      });
      expect(response.status).toBe(200);
      expect(await response.json()).toMatchObject({ result: 5, status: "completed" });
    } finally {
      await server.close();
    }
  });

  it("options that are not an object, or entries createServer refuses, reject with a TypeError (no throw)", async () => {
    let pending: Promise<unknown> | undefined;
    expect(() => (pending = serve(undefined as never))).not.toThrow();
    await expect(pending).rejects.toThrow(/expected \{ app \} or \{ entries \}/);
    await expect(serve({ entries: { bad: [42, "x"] } as never })).rejects.toThrow(TypeError);
  });
});
