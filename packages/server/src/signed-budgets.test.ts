import { encodePolicyHeader } from "rein";
import { createServer } from "./create-server";
import { serve } from "./serve";
import { entries } from "./__fixtures__/agents";
import { withUnsignedPolicyHeaders } from "./__fixtures__/unsigned-headers";

withUnsignedPolicyHeaders();
afterEach(() => {
  delete process.env.REIN_POLICY_SECRET;
});

function run(app: ReturnType<typeof createServer>, policy: string) {
  return app.request("/v1/agent/run", { method: "POST", headers: { "content-type": "application/json", "X-Agent-Policy": policy }, body: JSON.stringify({ entry: "add", args: [1, 2] }) });
}

describe("signed budgets at the server", () => {
  const app = createServer({ entries });

  it("an expired signed header → 400 invalid_policy saying it expired; a fresh one runs and the answer names the issuing run", async () => {
    process.env.REIN_POLICY_SECRET = "server-secret";
    const old = encodePolicyHeader({ depth: 3 }, { now: Date.now() - 301_000 });
    const expired = await run(app, old);
    expect(expired.status).toBe(400);
    expect(await expired.json()).toMatchObject({ error: { type: "invalid_policy", message: expect.stringContaining("expired") } });
    const fresh = await run(app, encodePolicyHeader({ depth: 3 }, { runId: "caller-run-7" }));
    expect(fresh.status).toBe(200);
    expect(await fresh.json()).toMatchObject({ result: 3, callerRunId: "caller-run-7" });
  });

  it("during a rotation (REIN_POLICY_SECRET=new,old) headers signed with either secret run; another secret's are refused", async () => {
    const fromOld = encodePolicyHeader({ depth: 3 }, { secret: "old" });
    const fromOther = encodePolicyHeader({ depth: 3 }, { secret: "other" });
    process.env.REIN_POLICY_SECRET = "new,old";
    expect((await run(app, fromOld)).status).toBe(200);
    expect((await run(app, encodePolicyHeader({ depth: 3 }, { secret: "new" }))).status).toBe(200);
    expect((await run(app, fromOther)).status).toBe(400);
  });
});

describe("the start-up warning", () => {
  it("without REIN_POLICY_SECRET serve() warns once that budgets are unsigned; with one it does not", async () => {
    const warnings: string[] = [];
    const open = await serve({ entries, warn: (message) => warnings.push(message) });
    await open.close();
    expect(warnings).toEqual([expect.stringMatching(/^REIN_POLICY_SECRET is not set: X-Agent-Policy budgets are unsigned/)]);
    process.env.REIN_POLICY_SECRET = "s";
    const signed = await serve({ entries, warn: (message) => warnings.push(message) });
    await signed.close();
    expect(warnings).toHaveLength(1);
  });
});
