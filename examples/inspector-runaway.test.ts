import { InMemorySessionStore } from "rein";
import { createServer } from "@rein/server";
import { entries } from "./inspector-runaway";

describe("examples/inspector-runaway.ts", () => {
  it("served with the inspector, the runaway is stopped by the recursion ceiling, and the feed carries its guard refusals and reach", async () => {
    const app = createServer({ entries, store: new InMemorySessionStore(), mintRootBudget: true, inspector: true });
    const feed = await app.request("/v1/runs/events");
    const reader = feed.body!.getReader();
    const answer = (await (
      await app.request("/v1/agent/run", { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ entry: "runaway", task: "recursion" }) })
    ).json()) as { status: string; error?: { name: string } };
    expect(answer).toMatchObject({ status: "error", error: { name: "RecursionError" } });
    let text = "";
    while (!text.includes('"entry":"runaway","status":"error"')) text += new TextDecoder().decode((await reader.read()).value);
    await reader.cancel();
    expect(text).toContain('"type":"guard-refusal"');
    expect(text).toContain('"type":"reach-status"');
    expect(text).toContain('"name":"WikiAgent.wiki_agent"');
  });
});
