/** `reachFetch` sends the budget header only to an origin on the allow list (the list itself: guard's reach-origins.test.ts). */
import { createServer, type Server } from "node:http";
import { Agent } from "../agent/agent";
import { Context } from "../context/context";
import { InMemorySessionStore } from "@rein/session";
import { inspectPolicyHeader, setReachOrigins } from "@rein/guard";
import { reachFetch, withReachBudget } from "./reach";
import { withCleanReachOrigins } from "../../../guard/src/reach/__fixtures__/clean-reach-origins";

withCleanReachOrigins();

describe("reachFetch and the allow list", () => {
  let server: Server;
  let url: string;
  const seen: { policy?: string | undefined; traceparent?: string | undefined }[] = [];
  beforeAll(async () => {
    server = createServer((request, response) => {
      seen.push({ policy: request.headers["x-agent-policy"] as string | undefined, traceparent: request.headers["traceparent"] as string | undefined });
      response.end("ok");
    });
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    url = `http://127.0.0.1:${(server.address() as { port: number }).port}/`;
  });
  afterAll(async () => {
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  });

  class Caller extends Agent {
    async call(): Promise<string> {
      return (await reachFetch(url)).text();
    }
  }

  it("an origin off the list gets no X-Agent-Policy (the traceparent still travels); a listed one gets the budget, signed with its expiry and the issuing call's node id", async () => {
    seen.length = 0;
    setReachOrigins(["https://only-this.internal"]);
    await withReachBudget({ depth: 3 }, () => new Caller().call());
    expect(seen[0]).toEqual({ policy: undefined, traceparent: expect.stringMatching(/^00-/) });
    setReachOrigins([new URL(url).origin]);
    process.env.REIN_POLICY_SECRET = "shared-secret";
    const before = Date.now();
    const store = new InMemorySessionStore();
    // A call recorded in a session has a node id: the header names it as the issuing run.
    await withReachBudget({ depth: 3 }, () => new Caller({ context: Context.forSession(store, "s") }).call());
    const callNode = store.readNodes("s").find((node) => node.name === "Caller.call")!;
    const contents = inspectPolicyHeader(seen[1]!.policy);
    expect(contents).toMatchObject({ budget: { depth: 2 }, signed: true, runId: callNode.id });
    expect(contents.expiresAt).toBeGreaterThanOrEqual(before + 300_000);
  });
});
