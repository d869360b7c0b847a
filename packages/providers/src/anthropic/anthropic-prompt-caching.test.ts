import { Agent, Runtime, type Message, type ModelRequest } from "@rein/core";
import { jsonFixture, useFixtureServer } from "../__fixtures__/fixture-server";
import { clockTool, firstUserTurn, system, weatherTool } from "../__fixtures__/weather-conversation";
import { AnthropicProvider } from "./anthropic-provider";

const server = useFixtureServer();

type Json = Record<string, unknown>;
type Breakpoint =
  | { readonly at: "tools"; readonly index: number }
  | { readonly at: "system"; readonly index: number }
  | { readonly at: "messages"; readonly message: number; readonly block: number };

/** Where the request body sets `cache_control`, in Anthropic's cache order: tools, system, messages. */
function breakpointsOf(body: Json): Breakpoint[] {
  const found: Breakpoint[] = [];
  (body.tools as Json[] | undefined)?.forEach((tool, index) => tool.cache_control && found.push({ at: "tools", index }));
  (body.system as Json[] | undefined)?.forEach((block, index) => block.cache_control && found.push({ at: "system", index }));
  (body.messages as Array<{ content: Json[] }>).forEach((message, messageIndex) =>
    message.content.forEach((block, blockIndex) => block.cache_control && found.push({ at: "messages", message: messageIndex, block: blockIndex })),
  );
  return found;
}

/**
 * The bytes the cache entry of a breakpoint covers: everything before and
 * including the marked block, in cache order, as the SDK serialized it,
 * without the markers (Anthropic keys its cache on content, not on where
 * breakpoints sit).
 */
function prefixBytes(body: Json, breakpoint: Breakpoint): string {
  const unmarked = JSON.parse(JSON.stringify(body), (key, value: unknown) => (key === "cache_control" ? undefined : value)) as Json;
  const tools = unmarked.tools as Json[];
  const systemBlocks = unmarked.system as Json[];
  const messages = unmarked.messages as Array<Json & { content: Json[] }>;
  if (breakpoint.at === "tools") return JSON.stringify([tools.slice(0, breakpoint.index + 1)]);
  if (breakpoint.at === "system") return JSON.stringify([tools, systemBlocks.slice(0, breakpoint.index + 1)]);
  const last = messages[breakpoint.message];
  return JSON.stringify([
    tools,
    systemBlocks,
    [...messages.slice(0, breakpoint.message), { ...last, content: last.content.slice(0, breakpoint.block + 1) }],
  ]);
}

function reply(turn: number): Json {
  const answer = jsonFixture(__dirname, "messages-tool-use.json") as Json;
  return {
    ...answer,
    content: [{ type: "tool_use", id: `toolu_turn_${turn}`, name: "get_weather", input: { city: `City ${turn}` } }],
    usage: { input_tokens: 20, cache_creation_input_tokens: 150, cache_read_input_tokens: 1800 + 150 * turn, output_tokens: 30 },
  };
}

describe("AnthropicProvider, prompt caching over a conversation", () => {
  it("keeps a rolling breakpoint on the last user turns, at most 4 in all, with byte-identical prefixes before each breakpoint request to request", async () => {
    const model = new AnthropicProvider("test-model", { apiKey: "test-key", baseURL: server().url, maxRetries: 0 });
    const history: Message[] = [firstUserTurn];
    const turns = 10;
    for (let turn = 0; turn < turns; turn++) server().reply({ json: reply(turn) });

    for (let turn = 0; turn < turns; turn++) {
      const request: ModelRequest = { system, messages: [...history], tools: [weatherTool, clockTool] };
      const response = await model.complete(request);
      expect(response.usage).toEqual({
        inputTokens: 20 + 150 + 1800 + 150 * turn,
        outputTokens: 30,
        cachedInputTokens: 1800 + 150 * turn,
        cacheCreationInputTokens: 150,
      });
      // The next step: the model's tool call, then its result (with the runtime's situational text after it).
      history.push({ role: "assistant", content: response.content });
      history.push({
        role: "user",
        content: [
          { type: "tool_result", toolUseId: `toolu_turn_${turn}`, content: `forecast ${turn}: sunny` },
          { type: "text", text: `[step ${turn + 1}]` },
        ],
      });
    }

    const bodies = server().requests.map((sent) => {
      // Re-serializing gives back the exact wire bytes, so comparing serialized regions compares bytes.
      expect(JSON.stringify(sent.body)).toBe(sent.rawBody);
      return sent.body as Json;
    });
    expect(bodies).toHaveLength(turns);
    bodies.forEach((body, turn) => {
      const breakpoints = breakpointsOf(body);
      const messages = body.messages as unknown[];
      const lastUser = messages.length - 1;
      // System prefix, the last user turn, and (from the second request on) the user turn before it;
      // every user turn here has two blocks, so the breakpoint is on block 1.
      const expected: Breakpoint[] = [{ at: "system", index: 0 }];
      if (turn > 0) expected.push({ at: "messages", message: lastUser - 2, block: 1 });
      expected.push({ at: "messages", message: lastUser, block: 1 });
      expect(breakpoints).toEqual(expected);
      expect(breakpoints.length).toBeLessThanOrEqual(4);
      if (turn === 0) return;
      const previous = bodies[turn - 1];
      // Every cache entry the previous request wrote or read is still there, byte for byte.
      for (const breakpoint of breakpointsOf(previous)) {
        expect(prefixBytes(body, breakpoint)).toBe(prefixBytes(previous, breakpoint));
      }
      // And this request reads it through a breakpoint of its own at the same place.
      expect(breakpoints).toContainEqual(breakpointsOf(previous).at(-1));
    });
  });
});

describe("a run's usage over the wire", () => {
  it("RunResult sums the cached and cache-creation tokens the server reports over a run's requests, and every request carries breakpoints", async () => {
    class Forecaster extends Agent {
      static methodOptions = { get_weather: { tool: true, description: "Weather in a city." } };
      get_weather(city: string): string {
        return `${city}: sunny`;
      }
    }
    const final = jsonFixture(__dirname, "messages-final-text.json") as Json;
    server().reply(
      { json: reply(0) },
      { json: reply(1) },
      { json: { ...final, usage: { input_tokens: 25, cache_creation_input_tokens: 40, cache_read_input_tokens: 2100, output_tokens: 12 } } },
    );
    const model = new AnthropicProvider("test-model", { apiKey: "test-key", baseURL: server().url, maxRetries: 0 });
    const turn = await new Forecaster({ runtime: new Runtime({ provider: model }) }).runTurn({ input: "Weather in three cities?" });
    expect(turn.status).toBe("completed");
    expect(turn.requests).toBe(3);
    expect(turn.usage).toEqual({
      inputTokens: 20 + 150 + 1800 + (20 + 150 + 1950) + (25 + 40 + 2100),
      outputTokens: 30 + 30 + 12,
      cachedInputTokens: 1800 + 1950 + 2100,
      cacheCreationInputTokens: 150 + 150 + 40,
    });
    for (const request of server().requests) expect(breakpointsOf(request.body as Json).length).toBeGreaterThan(0);
  });
});
