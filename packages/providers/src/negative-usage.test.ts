/**
 * A token count must be a non-negative integer: a provider (or gateway)
 * reporting a negative one is a ProviderError, like any mistyped count
 * (found by an attack review, 2026-12-03), and through the real OpenAI SDK
 * the run's reach budget is not refunded by it.
 */
import { Agent, ProviderError, Runtime } from "@rein/core";
import { failureOf, useFixtureServer } from "./__fixtures__/fixture-server";
import { OpenAIProvider } from "./openai/openai-provider";

const server = useFixtureServer();

function toolCallTurn(promptTokens: number) {
  return {
    id: "chatcmpl-1",
    object: "chat.completion",
    created: 0,
    model: "test-model",
    choices: [
      {
        index: 0,
        finish_reason: "tool_calls",
        message: { role: "assistant", content: null, tool_calls: [{ id: "call_1", type: "function", function: { name: "more", arguments: "{}" } }] },
      },
    ],
    usage: { prompt_tokens: promptTokens, completion_tokens: 100, total_tokens: promptTokens + 100 },
  };
}

class Spender extends Agent {
  static methodOptions = { more: { tool: true, description: "Do more." } };
  more(): string {
    return "ok";
  }
}

describe("token counts on the wire", () => {
  it("the adapter refuses a negative prompt_tokens like any mistyped token count", async () => {
    server().reply({ json: toolCallTurn(-1_000_000) });
    const model = new OpenAIProvider("test-model", { apiKey: "k", baseURL: `${server().url}/v1`, maxRetries: 0 });
    const error = await failureOf(model.complete({ system: "s", messages: [{ role: "user", content: [{ type: "text", text: "hi" }] }], tools: [] }));
    expect(error).toBeInstanceOf(ProviderError);
  });

  it("a negative usage from the wire never gives the reach token budget back: the run ends on the ProviderError, nothing more is sent", async () => {
    server().reply({ json: toolCallTurn(-1_000_000) });
    for (let i = 0; i < 20; i++) server().reply({ json: toolCallTurn(400) });
    const provider = new OpenAIProvider("test-model", { apiKey: "k", baseURL: `${server().url}/v1`, maxRetries: 0 });
    const agent = new Spender({ runtime: new Runtime({ provider, reach: { maxTokens: 1_600 }, maxIterations: 20 }) });
    const error = await agent.ask("Go.").catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(ProviderError);
    expect(server().requests.length).toBe(1);
  });
});
