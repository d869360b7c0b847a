import { Agent, ProviderError, Runtime, type ModelProvider } from "@rein/core";
import { useFixtureServer } from "./__fixtures__/fixture-server";
import { AnthropicProvider } from "./anthropic/anthropic-provider";
import { OpenAIProvider } from "./openai/openai-provider";

// The run's reach deadline passing while a real SDK client waits on a server that never answers:
// the HTTP request is aborted at the deadline, not left to the provider's own (ten-minute) timeoutMs.

const server = useFixtureServer();

const adapters: { name: string; make: () => ModelProvider }[] = [
  { name: "OpenAI", make: () => new OpenAIProvider("test-model", { apiKey: "test-key", baseURL: `${server().url}/v1`, maxRetries: 0, timeoutMs: 600_000 }) },
  { name: "Anthropic", make: () => new AnthropicProvider("test-model", { apiKey: "test-key", baseURL: server().url, maxRetries: 0, timeoutMs: 600_000 }) },
];

class Asker extends Agent {}

describe.each(adapters)("$name adapter under a reach deadline", (adapter) => {
  it("a request the server never answers is aborted at the deadline: the connection closes and the turn ends with the deadline's ReachExceededError", async () => {
    // The deadline starts at 1 s and doubles (up to 16 s) until the request reached the server before it:
    // on a loaded machine a fresh SDK can take longer than that just to connect, which proves nothing here.
    let error: unknown;
    let timeoutMs = 1_000;
    for (; ; timeoutMs *= 2) {
      const before = server().requests.length;
      server().reply({ silent: true });
      error = await new Asker({ runtime: new Runtime({ provider: adapter.make(), reach: { timeoutMs } }) }).ask("Hi.").catch((caught: unknown) => caught);
      if (server().requests.length > before || timeoutMs >= 16_000) break;
      await server().allConnectionsClosed();
    }
    expect(server().requests.length).toBeGreaterThan(0);
    // The reach error (from @rein/guard, which this package does not depend on): not the SDK's abort turned into a ProviderError.
    expect(error).toMatchObject({ name: "ReachExceededError", dimension: "deadline", limit: timeoutMs });
    expect(error).not.toBeInstanceOf(ProviderError);
    // The server never answered: only the client aborting its request closes the connection (else this test times out).
    await server().requests.at(-1)!.closed;
    await server().allConnectionsClosed();
  });
});
