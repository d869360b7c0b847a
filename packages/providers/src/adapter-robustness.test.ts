import { join } from "node:path";
import { inspect } from "node:util";
import Anthropic from "@anthropic-ai/sdk";
import OpenAI from "openai";
import {
  AuthenticationError,
  ProviderError,
  ProviderTimeoutError,
  RateLimitError,
  type ModelProvider,
  type ModelRequest,
  type ModelStreamEvent,
} from "@rein/core";
import { failureOf, jsonFixture, readFixture, useFixtureServer, type FixtureReply } from "./__fixtures__/fixture-server";
import { firstUserTurn, system } from "./__fixtures__/weather-conversation";
import { AnthropicProvider, type AnthropicProviderSettings } from "./anthropic/anthropic-provider";
import { OpenAIProvider, type OpenAIProviderSettings } from "./openai/openai-provider";

// The same failures, for every adapter, through the real SDK clients against the local fixture server.

const server = useFixtureServer();
const anthropicFixtures = join(__dirname, "anthropic");
const openaiFixtures = join(__dirname, "openai");
const secret = "sk-test-Secr3tKey-0123456789abcdef";

type Settings = AnthropicProviderSettings & OpenAIProviderSettings;

interface Adapter {
  readonly name: string;
  readonly make: (settings?: Settings) => ModelProvider;
  /** The adapter on a given SDK client whose request method throws `thrown` (a value that is not an Error). */
  readonly throwingFromSdk: (thrown: unknown) => ModelProvider;
  /** The adapter on a given SDK client (its own timeout ten minutes, two retries) whose fetch is `fetch`. */
  readonly withFetch: (fetch: typeof globalThis.fetch, settings?: Settings) => ModelProvider;
  readonly finalText: () => Record<string, unknown>;
  readonly streamText: () => string;
  /** The event that ends a complete stream, as error messages name it. */
  readonly endEvent: string;
  /** Marks the SSE event that makes a stream complete; everything before it is a stream cut short. */
  readonly endMarker: string;
  readonly malformed: ReadonlyArray<{ readonly body: (final: Record<string, unknown>) => unknown; readonly says: string }>;
  readonly malformedEvent: { readonly replace: [string, string]; readonly says: string };
  readonly echoingKey: () => { status: number; json: unknown };
}

const adapters: Adapter[] = [
  {
    name: "Anthropic",
    make: (settings = {}) =>
      new AnthropicProvider("test-model", { apiKey: secret, baseURL: server().url, maxRetries: 0, ...settings }),
    throwingFromSdk: (thrown) => {
      const client = new Anthropic({ apiKey: secret, baseURL: server().url });
      Object.assign(client.messages, { create: () => throwValue(thrown) });
      return new AnthropicProvider("test-model", { client, maxRetries: 0 });
    },
    withFetch: (fetch, settings = {}) =>
      new AnthropicProvider("test-model", {
        client: new Anthropic({ apiKey: secret, baseURL: server().url, fetch, timeout: 600_000, maxRetries: 2 }),
        maxRetries: 0,
        ...settings,
      }),
    finalText: () => jsonFixture(anthropicFixtures, "messages-final-text.json") as Record<string, unknown>,
    streamText: () => readFixture(anthropicFixtures, "messages-stream-text.sse"),
    endEvent: "message_stop",
    endMarker: "event: message_stop",
    malformed: [
      { body: (final) => ({ ...final, content: undefined }), says: "content is missing (expected an array)" },
      { body: (final) => ({ ...final, content: "Paris is sunny" }), says: 'content is the string "Paris is sunny" (expected an array)' },
      { body: (final) => ({ ...final, content: [{ type: "text", text: 21 }] }), says: "content[0].text is a number (expected a string)" },
      { body: (final) => ({ ...final, usage: undefined }), says: "usage is missing (expected an object)" },
      { body: (final) => ({ ...final, usage: { input_tokens: "96", output_tokens: 18 } }), says: 'usage.input_tokens is the string "96" (expected a count: a whole number of at least 0)' },
    ],
    malformedEvent: { replace: ['"text":"Par"', '"text":21'], says: "delta.text is a number (expected a string)" },
    echoingKey: () => ({
      status: 401,
      json: {
        type: "error",
        error: { type: "authentication_error", message: `invalid x-api-key: ${secret} (sent as Authorization: Bearer ${secret})` },
      },
    }),
  },
  ...(["chat", "responses"] as const).map(
    (api): Adapter => ({
      name: api === "chat" ? "OpenAI chat" : "OpenAI responses",
      make: (settings = {}) =>
        new OpenAIProvider("test-model", { api, apiKey: secret, baseURL: `${server().url}/v1`, maxRetries: 0, ...settings }),
      throwingFromSdk: (thrown) => {
        const client = new OpenAI({ apiKey: secret, baseURL: `${server().url}/v1` });
        if (api === "chat") Object.assign(client.chat.completions, { create: () => throwValue(thrown) });
        else Object.assign(client.responses, { create: () => throwValue(thrown) });
        return new OpenAIProvider("test-model", { api, client, maxRetries: 0 });
      },
      withFetch: (fetch, settings = {}) =>
        new OpenAIProvider("test-model", {
          api,
          client: new OpenAI({ apiKey: secret, baseURL: `${server().url}/v1`, fetch, timeout: 600_000, maxRetries: 2 }),
          maxRetries: 0,
          ...settings,
        }),
      finalText: () =>
        jsonFixture(openaiFixtures, api === "chat" ? "chat-final-text.json" : "responses-final-text.json") as Record<string, unknown>,
      streamText: () => readFixture(openaiFixtures, api === "chat" ? "chat-stream-text.sse" : "responses-stream-text.sse"),
      endEvent: api === "chat" ? "a finish_reason" : "response.completed",
      endMarker: api === "chat" ? '"finish_reason":"stop"' : "event: response.completed",
      malformed:
        api === "chat"
          ? [
              { body: (final) => ({ ...final, choices: undefined }), says: "choices is missing (expected a non-empty array)" },
              { body: (final) => ({ ...final, choices: [] }), says: "choices is an empty array (expected a non-empty array)" },
              { body: (final) => ({ ...final, choices: [{ index: 0, finish_reason: "stop" }] }), says: "choices[0].message is missing (expected an object)" },
              {
                body: (final) => ({ ...final, choices: [{ index: 0, message: { role: "assistant", content: 21 }, finish_reason: "stop" }] }),
                says: "choices[0].message.content is a number (expected a string or null)",
              },
              { body: (final) => ({ ...final, usage: undefined }), says: "usage is missing (expected an object)" },
            ]
          : [
              { body: (final) => ({ ...final, output: undefined }), says: "output is missing (expected an array)" },
              {
                body: (final) => ({ ...final, output: [{ type: "message", role: "assistant", content: [{ type: "output_text", text: 21 }] }] }),
                says: "output[0].content[0].text is a number (expected a string)",
              },
              { body: (final) => ({ ...final, usage: undefined }), says: "usage is missing (expected an object)" },
              { body: (final) => ({ ...final, usage: { input_tokens: 10 } }), says: "usage.output_tokens is missing (expected a count: a whole number of at least 0)" },
            ],
      malformedEvent:
        api === "chat"
          ? { replace: ['"content":"Par"', '"content":21'], says: "choices[0].delta.content is a number (expected a string or null)" }
          : { replace: ['"delta":"Par"', '"delta":21'], says: "delta is a number (expected a string)" },
      echoingKey: () => ({
        status: 401,
        json: {
          error: {
            message: `Incorrect API key provided: ${secret}. The request said Authorization: Bearer ${secret}`,
            type: "invalid_request_error",
            param: null,
            code: "invalid_api_key",
          },
        },
      }),
    }),
  ),
];

function restoreEnv(name: string, value: string | undefined): void {
  if (value === undefined) delete process.env[name];
  else process.env[name] = value;
}

function throwValue(thrown: unknown): never {
  throw thrown;
}

const request: ModelRequest = { system, messages: [firstUserTurn], tools: [] };

/** Runs a stream to its end, keeping what it yielded and how it failed. */
async function consume(events: AsyncIterable<ModelStreamEvent>): Promise<{ seen: ModelStreamEvent[]; error: unknown }> {
  const seen: ModelStreamEvent[] = [];
  try {
    for await (const event of events) seen.push(event);
  } catch (error) {
    return { seen, error };
  }
  return { seen, error: undefined };
}

/**
 * Every connection the client opened to the fixture server closes: an
 * aborted request must not leave its socket open. Awaited without a clock
 * (a connection left open fails the test by its timeout); the server having
 * seen a connection at all makes the check mean something.
 */
async function expectConnectionsClosed(): Promise<void> {
  expect(server().connections).toBeGreaterThan(0);
  await server().allConnectionsClosed();
}

/**
 * Queues `reply` and runs `call` with a whole-request `timeoutMs`, until the
 * request reached the server before the limit fired — on a loaded machine a
 * fresh SDK can take longer than the limit just to connect, and a call that
 * timed out before sending proves nothing about a stalled answer. The limit
 * doubles from 500 ms up to 16 s; each attempt queues its own reply (a late
 * request of an earlier attempt takes one). Returns the last attempt's
 * failure, its limit, and whether its request reached the server in time.
 */
async function timedOutAfterTheServerAnswered(
  reply: FixtureReply,
  call: (timeoutMs: number) => Promise<unknown>,
): Promise<{ error: unknown; timeoutMs: number; reached: boolean }> {
  for (let timeoutMs = 500; ; timeoutMs *= 2) {
    const before = server().requests.length;
    server().reply(reply);
    const error = await call(timeoutMs);
    const reached = server().requests.length > before;
    if (reached || timeoutMs >= 16_000) return { error, timeoutMs, reached };
    await server().allConnectionsClosed();
  }
}

function upTo(sse: string, marker: string): string {
  const events = sse.split("\n\n");
  const end = events.findIndex((event) => event.includes(marker));
  if (end < 1) throw new Error(`fixture has no ${marker}`);
  return `${events.slice(0, end).join("\n\n")}\n\n`;
}

describe.each(adapters)("$name adapter", (adapter) => {
  describe("whole-request timeoutMs", () => {
    it("fails a request whose body stalls after the headers with ProviderTimeoutError within timeoutMs, closing the connection", async () => {
      // The body never ends: only the whole-request timer can end this call (the idle timer covers streams only).
      const { error, timeoutMs, reached } = await timedOutAfterTheServerAnswered({ json: adapter.finalText(), stallAfterBytes: 20 }, (limit) =>
        failureOf(adapter.make({ timeoutMs: limit }).complete(request)),
      );
      expect(reached).toBe(true);
      expect(error).toBeInstanceOf(ProviderTimeoutError);
      expect(error).toMatchObject({ limit: "timeoutMs", timeoutMs });
      expect((error as Error).message).toMatch(new RegExp(`timed out: no complete answer within timeoutMs = ${timeoutMs} ms, so it was aborted — raise timeoutMs`));
      await expectConnectionsClosed();
    });

    it("fails a stream that stalls right after its headers with ProviderTimeoutError within timeoutMs, closing the connection", async () => {
      // timeoutMs fires first (the idle timer is ten minutes): it is the limit the error names.
      let seen: ModelStreamEvent[] = [];
      const { error, timeoutMs, reached } = await timedOutAfterTheServerAnswered({ sse: adapter.streamText(), stallAfterBytes: 0 }, async (limit) => {
        const consumed = await consume(adapter.make({ timeoutMs: limit, idleTimeoutMs: 600_000 }).stream(request));
        seen = consumed.seen;
        return consumed.error;
      });
      expect(reached).toBe(true);
      expect(error).toBeInstanceOf(ProviderTimeoutError);
      expect(error).toMatchObject({ limit: "timeoutMs", timeoutMs });
      expect(seen).toEqual([]);
      await expectConnectionsClosed();
    });

    it("bounds a request through a given client too, whatever the client's own timeout", async () => {
      // The client's own timeout is ten minutes: a call that ends at all was ended by timeoutMs.
      const { error, timeoutMs, reached } = await timedOutAfterTheServerAnswered({ json: adapter.finalText(), stallAfterBytes: 0 }, (limit) =>
        failureOf(adapter.withFetch(fetch, { timeoutMs: limit }).complete(request)),
      );
      expect(reached).toBe(true);
      expect(error).toBeInstanceOf(ProviderTimeoutError);
      expect(error).toMatchObject({ limit: "timeoutMs", timeoutMs });
      await expectConnectionsClosed();
    });
  });

  describe("stream idleTimeoutMs", () => {
    it("fails a stream that goes silent mid-way with ProviderTimeoutError within idleTimeoutMs, after the deltas that came", async () => {
      const sse = adapter.streamText();
      server().reply({ sse, stallAfterBytes: Math.floor(sse.length * 0.6) });
      // The whole-request timer is ten minutes: the idle timer is what ends this stream. It is 5 s, not 0.5 s: each event,
      // the first included, is awaited for idleTimeoutMs, and on a loaded machine the first delta took longer than 0.5 s.
      const { seen, error } = await consume(adapter.make({ idleTimeoutMs: 5_000, timeoutMs: 600_000 }).stream(request));
      expect(error).toBeInstanceOf(ProviderTimeoutError);
      expect(error).toMatchObject({ limit: "idleTimeoutMs", timeoutMs: 5_000 });
      expect((error as Error).message).toMatch(/stream went silent for idleTimeoutMs = 5000 ms before its end, so the request was aborted — raise idleTimeoutMs/);
      expect(seen.some((event) => event.type === "text-delta")).toBe(true);
      expect(seen.some((event) => event.type === "response")).toBe(false);
      await expectConnectionsClosed();
    });
  });

  describe("retries: maxRetries and maxRetryAfterMs", () => {
    it("raises RateLimitError at once, with retryAfterMs, when retry-after is longer than maxRetryAfterMs", async () => {
      const tooLong: FixtureReply = { status: 429, headers: { "retry-after": "3600" }, json: { error: { message: "slow down", type: "rate_limit_error" } } };
      server().reply(tooLong, tooLong);
      const model = adapter.make({ maxRetries: 2 });
      // Not waited for: a call that slept through the hour would fail the test by its timeout.
      const completeError = await failureOf(model.complete(request));
      const { error: streamError } = await consume(model.stream(request));
      for (const error of [completeError, streamError]) {
        expect(error).toBeInstanceOf(RateLimitError);
        expect(error).toMatchObject({ retryAfterMs: 3_600_000, retryAfterSeconds: 3600, status: 429 });
        expect((error as Error).message).toContain(
          "retry after 3600s (more than maxRetryAfterMs = 10000 ms, so it was not waited for here: retry later, or raise maxRetryAfterMs",
        );
      }
      expect(server().requests).toHaveLength(2);
    });

    it("honours a lower maxRetryAfterMs, and retries shorter waits up to maxRetries", async () => {
      const shortWait: FixtureReply = { status: 429, headers: { "retry-after-ms": "20" }, json: { error: { message: "slow down" } } };
      server().reply(shortWait, shortWait, shortWait, shortWait, { json: adapter.finalText() });
      const exhausted = await failureOf(adapter.make({ maxRetries: 2 }).complete(request));
      expect(exhausted).toBeInstanceOf(RateLimitError);
      expect(server().requests).toHaveLength(3);
      const answered = await adapter.make({ maxRetries: 1 }).complete(request);
      expect(answered.stopReason).toBe("end_turn");
      expect(server().requests).toHaveLength(5);

      server().reply(shortWait);
      const refused = await failureOf(adapter.make({ maxRetries: 3, maxRetryAfterMs: 10 }).complete(request));
      expect(refused).toMatchObject({ retryAfterMs: 20 });
      expect(server().requests).toHaveLength(6);
    });

    it("rejects limits that are not valid numbers, naming the option", () => {
      expect(() => adapter.make({ timeoutMs: -1 })).toThrow("timeoutMs must be a number of milliseconds >= 1 and <= 2147483647, got -1");
      expect(() => adapter.make({ maxRetries: 1.5 })).toThrow("maxRetries must be an integer >= 0, got 1.5");
      expect(() => adapter.make({ idleTimeoutMs: "5" as unknown as number })).toThrow('idleTimeoutMs must be a number of milliseconds >= 1 and <= 2147483647, got "5"');
    });
  });

  describe("streams cut before their end event", () => {
    it(`fails a stream closed cleanly before its end event with a ProviderError, never a partial answer`, async () => {
      const sse = adapter.streamText();
      for (const cut of [upTo(sse, adapter.endMarker), sse.slice(0, Math.floor(sse.length * 0.6))]) {
        server().reply({ sse: cut });
        const { seen, error } = await consume(adapter.make().stream(request));
        expect(error).toBeInstanceOf(ProviderError);
        expect((error as Error).message).toMatch(
          new RegExp(`stream ended early: the connection closed after \\d+ events?, before ${adapter.endEvent}, so the answer is incomplete and was dropped`),
        );
        expect(seen.some((event) => event.type === "response")).toBe(false);
      }
    });

    it("fails a stream whose connection breaks at 60% with a ProviderError saying it ended early", async () => {
      const sse = adapter.streamText();
      server().reply({ sse, cutAfterBytes: Math.floor(sse.length * 0.6), abrupt: true });
      const { seen, error } = await consume(adapter.make().stream(request));
      expect(error).toBeInstanceOf(ProviderError);
      expect((error as Error).message).toMatch(/stream ended early: the connection broke \(.*terminated.*\)/);
      expect(seen.some((event) => event.type === "response")).toBe(false);
    });

    it("fails a non-streamed answer cut at 60%, cleanly or not, with a ProviderError", async () => {
      const body = JSON.stringify(adapter.finalText());
      server().reply(
        { json: adapter.finalText(), cutAfterBytes: Math.floor(body.length * 0.6) },
        { json: adapter.finalText(), cutAfterBytes: Math.floor(body.length * 0.6), abrupt: true },
      );
      for (let attempt = 0; attempt < 2; attempt++) {
        const error = await failureOf(adapter.make().complete(request));
        expect(error).toBeInstanceOf(ProviderError);
      }
    });
  });

  describe("malformed responses", () => {
    it.each(adapter.malformed.map((example) => [example.says, example]))(
      "fails a body where %s with a ProviderError naming it",
      async (_says, example) => {
        server().reply({ json: example.body(adapter.finalText()) });
        const error = await failureOf(adapter.make().complete(request));
        expect(error).toBeInstanceOf(ProviderError);
        expect((error as Error).message).toBe(`${adapter.make().providerId} sent a malformed response: ${example.says}`);
      },
    );

    it("fails a 200 answer that is not JSON with a ProviderError naming the body", async () => {
      server().reply({ text: "<html>502 Bad Gateway</html>", headers: { "content-type": "text/html" } });
      const error = await failureOf(adapter.make().complete(request));
      expect(error).toBeInstanceOf(ProviderError);
      expect((error as Error).message).toMatch(/sent a malformed response: the body is .* \(expected an object\)/);
    });

    it("fails a stream event of the wrong shape, or one that is not JSON, with a ProviderError", async () => {
      const [from, to] = adapter.malformedEvent.replace;
      const sse = adapter.streamText();
      expect(sse).toContain(from);
      server().reply({ sse: sse.replace(from, to) }, { sse: sse.replace(from, "{not json") });
      // The SDKs log the line they cannot parse before throwing; this test expects that line.
      const saved = { anthropic: process.env.ANTHROPIC_LOG, openai: process.env.OPENAI_LOG };
      process.env.ANTHROPIC_LOG = "off";
      process.env.OPENAI_LOG = "off";
      const wrongType = await consume(adapter.make().stream(request));
      expect(wrongType.error).toBeInstanceOf(ProviderError);
      expect((wrongType.error as Error).message).toContain(`sent a malformed stream event: ${adapter.malformedEvent.says}`);
      const notJson = await consume(adapter.make().stream(request));
      expect(notJson.error).toBeInstanceOf(ProviderError);
      expect((notJson.error as Error).message).toContain("sent a malformed stream event");
      restoreEnv("ANTHROPIC_LOG", saved.anthropic);
      restoreEnv("OPENAI_LOG", saved.openai);
    });

    it("wraps a non-Error thrown by the SDK or its fetch in a ProviderError that shows it", async () => {
      const fromMethod = await failureOf(adapter.throwingFromSdk({ code: 7 }).complete(request));
      expect(fromMethod).toBeInstanceOf(ProviderError);
      expect((fromMethod as Error).message).toContain('{"code":7} (a non-Error value was thrown)');
      const fromUndefined = await consume(adapter.throwingFromSdk(undefined).stream(request));
      expect(fromUndefined.error).toBeInstanceOf(ProviderError);
      expect((fromUndefined.error as Error).message).toContain("undefined (a non-Error value was thrown)");
      const fromFetch = await failureOf(adapter.withFetch(() => Promise.reject("socket exploded")).complete(request));
      expect(fromFetch).toBeInstanceOf(ProviderError);
      expect((fromFetch as Error).message).toContain("socket exploded");
    });
  });

  describe("API key redaction", () => {
    it("keeps the API key out of the message, the cause, the body and toString() when a 401 echoes it", async () => {
      server().reply(adapter.echoingKey());
      const error = (await failureOf(adapter.make().complete(request))) as AuthenticationError;
      expect(error).toBeInstanceOf(AuthenticationError);
      expect(error.message).toContain("[redacted]");
      expect(error.message).toContain("Bearer [redacted]");
      const cause = error.cause as Error;
      for (const text of [
        error.message,
        String(error),
        error.stack,
        JSON.stringify(error.body),
        String(cause),
        cause.stack,
        inspect(error, { depth: 8 }),
      ]) {
        expect(text).not.toContain(secret);
      }
    });

    it("redacts a 500 text body echoing the key, x-api-key and a bearer token", async () => {
      server().reply({
        status: 500,
        text: `upstream rejected {"x-api-key": "${secret}", "authorization": "Bearer proxy-token-42"} for key ${secret}`,
      });
      const error = (await failureOf(adapter.make().complete(request))) as ProviderError;
      expect(error).toBeInstanceOf(ProviderError);
      expect(error.status).toBe(500);
      const texts = [error.message, String(error), error.stack, inspect(error, { depth: 8 }), String(JSON.stringify(error.body))];
      for (const text of texts) {
        expect(text).not.toContain(secret);
        expect(text).not.toContain("proxy-token-42");
      }
      expect(inspect(error, { depth: 8 })).toContain('"x-api-key": "[redacted]"');
    });
  });
});
