import { Agent, ProviderError, RateLimitError, Runtime, UsageError, type RunEvent, type RuntimeOptions } from "@rein/core";
import { failureOf, jsonFixture, readFixture, useFixtureServer, type FixtureReply } from "./__fixtures__/fixture-server";
import { AnthropicProvider } from "./anthropic/anthropic-provider";
import { OpenAIProvider } from "./openai/openai-provider";
import { ProviderConfigError } from "./provider-config-error";

// Provider configuration mistakes and rate-limit waits, through the real SDKs against the local wire-format server.

const server = useFixtureServer();
const hello = { system: "Be brief.", messages: [{ role: "user" as const, content: [{ type: "text" as const, text: "Hi" }] }], tools: [] };
const CREDENTIALS = ["ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN", "ANTHROPIC_BASE_URL", "OPENAI_API_KEY", "OPENAI_BASE_URL"];

/** Runs `work` with none of the providers' variables set (and `set` on top), restoring them after. */
async function withEnvironment<T>(set: Record<string, string>, work: () => T | Promise<T>): Promise<T> {
  const saved = CREDENTIALS.map((name) => [name, process.env[name]] as const);
  for (const name of CREDENTIALS) delete process.env[name];
  Object.assign(process.env, set);
  try {
    return await work();
  } finally {
    for (const [name, value] of saved) {
      if (value === undefined) delete process.env[name];
      else process.env[name] = value;
    }
  }
}

function thrown(work: () => unknown): unknown {
  try {
    work();
  } catch (error) {
    return error;
  }
  throw new Error("expected an error");
}

describe("a provider without credentials is a ProviderConfigError when it is constructed, naming the variable to set", () => {
  it("OpenAIProvider with no key and no base URL (it was the SDK's raw 'Missing credentials' Error on the first request)", async () => {
    await withEnvironment({}, () => {
      for (const settings of [{}, { apiKey: "" }, { apiKey: "   " }]) {
        const error = thrown(() => new OpenAIProvider("gpt-4.1", settings));
        expect(ProviderConfigError.isInstance(error)).toBe(true);
        expect(UsageError.isInstance(error)).toBe(true);
        expect(error).toMatchObject({ name: "ProviderConfigError", provider: "openai", variable: "OPENAI_API_KEY" });
        expect((error as Error).message).toBe(
          "OpenAIProvider: no API key: set OPENAI_API_KEY, or pass { apiKey }, or set OPENAI_BASE_URL (or pass { baseURL }) for an OpenAI-compatible server that needs no key",
        );
      }
    });
  });

  it("AnthropicProvider with no key (it was a ProviderError, answered 502 by a server, on the first request)", async () => {
    await withEnvironment({}, () => {
      const error = thrown(() => new AnthropicProvider("claude-sonnet-5-5"));
      expect(ProviderConfigError.isInstance(error)).toBe(true);
      expect(ProviderError.isInstance(error)).toBe(false);
      expect(error).toMatchObject({ provider: "anthropic", variable: "ANTHROPIC_API_KEY" });
      expect((error as Error).message).toBe(
        "AnthropicProvider: no API key: set ANTHROPIC_API_KEY, or pass { apiKey } (ANTHROPIC_AUTH_TOKEN works too), or pass { client }",
      );
    });
  });

  it("each way of configuring one is accepted and reaches the server: a key in the settings or the environment, a base URL alone (OpenAI-compatible), ANTHROPIC_AUTH_TOKEN", async () => {
    const anthropicAnswer = jsonFixture(`${__dirname}/anthropic`, "messages-final-text.json");
    const openaiAnswer = jsonFixture(`${__dirname}/openai`, "chat-final-text.json");
    await withEnvironment({ OPENAI_BASE_URL: `${server().url}/v1` }, async () => {
      server().reply({ json: openaiAnswer });
      expect((await new OpenAIProvider("local-model", { maxRetries: 0 }).complete(hello)).stopReason).toBe("end_turn");
    });
    await withEnvironment({ OPENAI_API_KEY: "env-key" }, async () => {
      server().reply({ json: openaiAnswer });
      await new OpenAIProvider("test-model", { baseURL: `${server().url}/v1`, maxRetries: 0 }).complete(hello);
      expect(server().requests.at(-1)!.headers.authorization).toBe("Bearer env-key");
    });
    await withEnvironment({ ANTHROPIC_AUTH_TOKEN: "token-1" }, async () => {
      server().reply({ json: anthropicAnswer });
      await new AnthropicProvider("test-model", { baseURL: server().url, maxRetries: 0 }).complete(hello);
      expect(server().requests.at(-1)!.headers.authorization).toBe("Bearer token-1");
    });
    await withEnvironment({}, async () => {
      server().reply({ json: anthropicAnswer });
      await new AnthropicProvider("test-model", { apiKey: "given-key", baseURL: server().url, maxRetries: 0 }).complete(hello);
      expect(server().requests.at(-1)!.headers.authorization).toBe("Bearer given-key");
    });
  });
});

describe("rate-limit waits are reported, and a long one is not slept through by default", () => {
  const rateLimited = (retryAfter: Record<string, string>): FixtureReply => ({
    status: 429,
    headers: retryAfter,
    json: { type: "error", error: { type: "rate_limit_error", message: "slow down" } },
  });

  it("a 429 with retry-after: 30 fails at once with RateLimitError (retryAfterMs 30000): the default maxRetryAfterMs is 10 s, not a silent minute", async () => {
    server().reply(rateLimited({ "retry-after": "30" }));
    const error = await failureOf(new AnthropicProvider("test-model", { apiKey: "k", baseURL: server().url }).complete(hello));
    expect(error).toBeInstanceOf(RateLimitError);
    expect(error).toMatchObject({ retryAfterMs: 30_000 });
    expect((error as Error).message).toContain("more than maxRetryAfterMs = 10000 ms, so it was not waited for here");
    expect(server().requests).toHaveLength(1);
  });

  it("each wait that is slept through is reported first: onRetry (attempt, wait, whose wait, status); a listener that throws changes nothing", async () => {
    const seen: unknown[] = [];
    server().reply(rateLimited({ "retry-after-ms": "30" }), rateLimited({ "retry-after-ms": "40" }), { json: jsonFixture(`${__dirname}/anthropic`, "messages-final-text.json") });
    const provider = new AnthropicProvider("test-model", { apiKey: "k", baseURL: server().url, maxRetries: 2 });
    await provider.complete(hello, { onRetry: (retry) => seen.push(retry) });
    expect(seen).toEqual([
      { provider: "anthropic", attempt: 1, waitMs: 30, fromRetryAfter: true, status: 429, reason: "429 rate limited" },
      { provider: "anthropic", attempt: 2, waitMs: 40, fromRetryAfter: true, status: 429, reason: "429 rate limited" },
    ]);
    // A listener that throws changes nothing.
    server().reply(rateLimited({ "retry-after-ms": "5" }), { json: jsonFixture(`${__dirname}/anthropic`, "messages-final-text.json") });
    const answered = await provider.complete(hello, {
      onRetry: () => {
        throw new Error("listener bug");
      },
    });
    expect(answered.stopReason).toBe("end_turn");
  });

  it("a run reports it as a model-retry event and a warning log line with the wait", async () => {
    // A logger that keeps its warnings (pino's shape: warn(fields, message); every other method does nothing).
    const lines: Record<string, unknown>[] = [];
    const logger: NonNullable<RuntimeOptions["logger"]> = new Proxy({} as NonNullable<RuntimeOptions["logger"]>, {
      get: (_target, property) =>
        property === "warn"
          ? (fields: Record<string, unknown>, msg: string) => lines.push({ level: 40, ...fields, msg })
          : property === "child"
            ? () => logger
            : () => undefined,
    });
    const events: RunEvent[] = [];
    // A run with a listener streams its requests: the retry of a stream is reported the same way.
    server().reply(rateLimited({ "retry-after": "1" }), { sse: readFixture(`${__dirname}/openai`, "chat-stream-text.sse") });
    const provider = new OpenAIProvider("test-model", { apiKey: "k", baseURL: `${server().url}/v1` });
    class Asker extends Agent {}
    const answer = await new Asker({ runtime: new Runtime({ provider, logger, onEvent: (event) => events.push(event) }) }).ask("Hi");
    expect(typeof answer).toBe("string");
    const retries = events.filter((event) => event.type === "model-retry");
    expect(retries).toEqual([
      expect.objectContaining({ type: "model-retry", step: 1, provider: "openai", attempt: 1, waitMs: 1000, fromRetryAfter: true, status: 429, agent: "Asker" }),
    ]);
    // Between the request and its answer, in order.
    const types = events.map((event) => event.type);
    expect(types.indexOf("model-request")).toBeLessThan(types.indexOf("model-retry"));
    expect(types.indexOf("model-retry")).toBeLessThan(types.indexOf("model-response"));
    expect(lines).toEqual([expect.objectContaining({ level: 40, provider: "openai", attempt: 1, waitMs: 1000, msg: "openai request 429 rate limited: retry 1 in 1.0 s (the server's retry-after)" })]);
  });
});
