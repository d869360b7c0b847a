import { encodePolicyHeader, InMemorySessionStore } from "rein";
import { createServer } from "./create-server";
import { entries } from "./__fixtures__/agents";
import { withUnsignedPolicyHeaders } from "./__fixtures__/unsigned-headers";

const header = (depth: number) => encodePolicyHeader({ depth });

function post(app: ReturnType<typeof createServer>, body: unknown, headers: Record<string, string> = { "X-Agent-Policy": header(3) }) {
  return app.request("/v1/agent/run", {
    method: "POST",
    headers: { "content-type": "application/json", ...headers },
    body: typeof body === "string" ? body : JSON.stringify(body),
  });
}

withUnsignedPolicyHeaders();

describe("createServer options", () => {
  it("rejects entries that are not [class or factory, method] at construction", () => {
    expect(() => createServer({ entries: { x: ["nope", "m"] } } as never)).toThrow(/entries.x must be/);
    expect(() => createServer({ entries: { x: [entries.research[0], "missing"] } })).toThrow(/has no method 'missing'/);
    expect(() => createServer(undefined as never)).toThrow(TypeError);
  });
});

describe("POST /v1/agent/run", () => {
  const store = new InMemorySessionStore();
  const app = createServer({ entries, store });

  it("runs a listed class entry and answers JSON with result, status, session, head and run id", async () => {
    const response = await post(app, { entry: "research", task: "task-json", sessionId: "s-json" });
    expect(response.status).toBe(200);
    const body = (await response.json()) as Record<string, unknown>;
    expect(body).toMatchObject({ result: "answer about task-json", status: "completed", sessionId: "s-json", budget: { depth: 3 } });
    expect(typeof body["headId"]).toBe("string");
    // A class entry's runs report to the request too (withRunListener): usage is summed from them.
    expect(body["usage"]).toEqual({ inputTokens: 10, outputTokens: 5 });
    expect(response.headers.get("x-run-id")).toBe(body["runId"]);
    expect(JSON.stringify(store.readNodes("s-json"))).toContain("task-json");
  });

  it("passes args to the method; without a sessionId the run gets its own session", async () => {
    const body = (await (await post(app, { entry: "add", args: [2, 3] })).json()) as Record<string, unknown>;
    expect(body).toMatchObject({ result: 5, status: "completed" });
    expect(store.hasSession(body["sessionId"] as string)).toBe(true);
  });

  it("a factory entry reports usage summed over its model responses", async () => {
    const body = (await (await post(app, { entry: "stream", task: "task-usage" })).json()) as Record<string, unknown>;
    expect(body).toMatchObject({ result: "answer about task-usage", usage: { inputTokens: 7, outputTokens: 3 } });
  });

  it("only listed entries are callable: anything else is 404 with a typed error", async () => {
    for (const entry of ["nope", "constructor", "__proto__", "toString", "hasOwnProperty"]) {
      const response = await post(app, { entry });
      expect(response.status).toBe(404);
      expect(await response.json()).toMatchObject({ error: { type: "not_found" } });
    }
  });

  it("X-Agent-Policy missing → 400 missing_policy; malformed or forged → 400 invalid_policy", async () => {
    const missing = await post(app, { entry: "research", task: "x" }, {});
    expect(missing.status).toBe(400);
    expect(await missing.json()).toMatchObject({ error: { type: "missing_policy" } });
    for (const value of ["garbage", "e30.", "a.b.c", "%%%", "x".repeat(5000)]) {
      const response = await post(app, { entry: "research", task: "x" }, { "X-Agent-Policy": value });
      expect(response.status).toBe(400);
      expect(await response.json()).toMatchObject({ error: { type: "invalid_policy" } });
    }
  });

  it("a header signed with another secret is forged → 400; with the server's secret it runs", async () => {
    const unsignedHeader = header(3);
    process.env.REIN_POLICY_SECRET = "server-secret";
    try {
      const forged = await post(app, { entry: "add", args: [1, 1] }, { "X-Agent-Policy": encodePolicyHeader({ depth: 3 }, { secret: "other" }) });
      expect(forged.status).toBe(400);
      expect(await forged.json()).toMatchObject({ error: { type: "invalid_policy" } });
      const unsigned = await post(app, { entry: "add", args: [1, 1] }, { "X-Agent-Policy": unsignedHeader });
      expect(unsigned.status).toBe(400);
      const signed = await post(app, { entry: "add", args: [1, 1] }, { "X-Agent-Policy": encodePolicyHeader({ depth: 3 }) });
      expect(signed.status).toBe(200);
    } finally {
      delete process.env.REIN_POLICY_SECRET;
    }
  });

  it("a signed header claiming to live longer than maxPolicyTtlMs → 400 (a captured one cannot be replayed that long); the option raises the bound; a bad one is a TypeError", async () => {
    process.env.REIN_POLICY_SECRET = "server-secret";
    try {
      const tenMinutes = encodePolicyHeader({ depth: 3 }, { ttlMs: 10 * 60_000 });
      const refused = await post(app, { entry: "add", args: [1, 1] }, { "X-Agent-Policy": tenMinutes });
      expect(refused.status).toBe(400);
      expect(await refused.json()).toMatchObject({ error: { type: "invalid_policy", message: expect.stringContaining("maxTtlMs") } });
      const patient = createServer({ entries, maxPolicyTtlMs: 15 * 60_000 });
      const accepted = await post(patient, { entry: "add", args: [1, 1] }, { "X-Agent-Policy": tenMinutes });
      expect(await accepted.json()).toMatchObject({ result: 2 });
      expect(() => createServer({ entries, maxPolicyTtlMs: 0 })).toThrow(/maxPolicyTtlMs must be a positive number/);
    } finally {
      delete process.env.REIN_POLICY_SECRET;
    }
  });

  it("an exhausted budget (depth 0) → 403 reach_exceeded without running", async () => {
    const response = await post(app, { entry: "research", task: "x" }, { "X-Agent-Policy": header(0) });
    expect(response.status).toBe(403);
    expect(await response.json()).toMatchObject({ error: { type: "reach_exceeded" } });
  });

  it("a ReachError thrown by the run (an Agent entry beyond the budget) → 403 with status error", async () => {
    expect(await (await post(app, { entry: "nest" }, { "X-Agent-Policy": header(2) })).json()).toMatchObject({ result: "inner", status: "completed" });
    const refused = await post(app, { entry: "nest" }, { "X-Agent-Policy": header(1) });
    expect(refused.status).toBe(403);
    expect(await refused.json()).toMatchObject({ status: "error", error: { type: "reach_exceeded", name: "ReachExceededError" } });
  });

  it("a budget larger than the local policy is clamped to it (budget in the answer)", async () => {
    const body = (await (await post(app, { entry: "add", args: [1, 2] }, { "X-Agent-Policy": header(99) })).json()) as Record<string, unknown>;
    expect(body["budget"]).toMatchObject({ depth: 5 });
  });

  it("mintRootBudget: a request without the header gets the local policy's root budget", async () => {
    const minting = createServer({ entries, mintRootBudget: true });
    const body = (await (await post(minting, { entry: "add", args: [1, 2] }, {})).json()) as Record<string, unknown>;
    expect(body).toMatchObject({ result: 3, budget: { depth: 5 } });
  });

  it("body validation: 400 naming the field", async () => {
    const cases: [unknown, RegExp][] = [
      ["not json", /body must be JSON/],
      ["[]", /JSON object/],
      ["null", /JSON object/],
      [{}, /body.entry/],
      [{ entry: 5 }, /body.entry/],
      [{ entry: "add", args: "x" }, /body.args/],
      [{ entry: "add", args: [], task: "x" }, /exclusive/],
      [{ entry: "add", sessionId: 5 }, /body.sessionId/],
      [{ entry: "add", sessionId: "../x" }, /body.sessionId/],
      [{ entry: "add", extra: 1 }, /body.extra/],
    ];
    for (const [body, message] of cases) {
      const response = await post(app, body);
      expect(response.status).toBe(400);
      const json = (await response.json()) as { error: { type: string; message: string } };
      expect(json.error.type).toBe("invalid_body");
      expect(json.error.message).toMatch(message);
    }
  });

  it("a body over the limit → 413", async () => {
    const small = createServer({ entries, maxBodyBytes: 100 });
    const response = await post(small, { entry: "research", task: "x".repeat(200) });
    expect(response.status).toBe(413);
    expect(await response.json()).toMatchObject({ error: { type: "body_too_large" } });
  });

  it("a method that throws → 200 status error; a provider failure → 502 provider_error", async () => {
    const failed = await post(app, { entry: "fail" });
    expect(failed.status).toBe(200);
    expect(await failed.json()).toMatchObject({ status: "error", error: { type: "run_error", message: "the entry failed" } });
    const broken = await post(app, { entry: "broken", task: "x" });
    expect(broken.status).toBe(502);
    expect(await broken.json()).toMatchObject({ status: "error", error: { type: "provider_error" } });
  });
});

describe("sessions, graphs, cancel, healthz", () => {
  const store = new InMemorySessionStore();
  const app = createServer({ entries, store });

  it("GET /v1/sessions/:id returns the session and its nodes; unknown → 404", async () => {
    await post(app, { entry: "research", task: "task-session", sessionId: "s1" });
    const response = await app.request("/v1/sessions/s1");
    expect(response.status).toBe(200);
    const body = (await response.json()) as { session: { id: string }; nodes: { name: string }[] };
    expect(body.session.id).toBe("s1");
    expect(body.nodes.some((node) => node.name === "Researcher.research")).toBe(true);
    expect((await app.request("/v1/sessions/nope")).status).toBe(404);
  });

  it("GET /v1/sessions/:id/graph renders mermaid, dot and json; another format → 400", async () => {
    expect(await (await app.request("/v1/sessions/s1/graph?format=mermaid")).text()).toMatch(/^(flowchart|graph)/);
    expect(await (await app.request("/v1/sessions/s1/graph?format=dot")).text()).toMatch(/digraph/);
    const json = await app.request("/v1/sessions/s1/graph");
    expect(json.headers.get("content-type")).toContain("application/json");
    expect(JSON.parse(await json.text())).toBeDefined();
    expect((await app.request("/v1/sessions/s1/graph?format=svg")).status).toBe(400);
    expect((await app.request("/v1/sessions/nope/graph")).status).toBe(404);
  });

  it("POST /v1/runs/:id/cancel cancels a run in flight (id chosen by the client in X-Run-Id): it answers status cancelled", async () => {
    // The sleep (60 s) outlasts the test's timeout: an answer at all means the cancel ended it.
    const running = post(app, { entry: "sleep", args: [60_000] }, { "X-Agent-Policy": header(3), "X-Run-Id": "run-to-cancel" });
    // wait until the run is in flight (under load the request may take a while to get there)
    for (let i = 0; i < 400; i++) {
      if (((await (await app.request("/healthz")).json()) as { runs: number }).runs > 0) break;
      await new Promise((r) => setTimeout(r, 5));
    }
    const duplicate = await post(app, { entry: "sleep", args: [1] }, { "X-Agent-Policy": header(3), "X-Run-Id": "run-to-cancel" });
    expect(duplicate.status).toBe(400);
    expect(await duplicate.json()).toMatchObject({ error: { type: "invalid_run_id" } });
    const cancel = await app.request("/v1/runs/run-to-cancel/cancel", { method: "POST" });
    expect(cancel.status).toBe(200);
    const response = await running;
    expect(response.headers.get("x-run-id")).toBe("run-to-cancel");
    expect(await response.json()).toMatchObject({ runId: "run-to-cancel", status: "cancelled" });
    expect((await app.request("/v1/runs/run-to-cancel/cancel", { method: "POST" })).status).toBe(404);
  });

  it("GET /healthz answers ok", async () => {
    expect(await (await app.request("/healthz")).json()).toMatchObject({ status: "ok" });
  });

  it("an unknown route is a typed 404", async () => {
    const response = await app.request("/v2/nothing");
    expect(response.status).toBe(404);
    expect(await response.json()).toMatchObject({ error: { type: "not_found" } });
  });
});
