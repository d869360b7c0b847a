import { createServer, type IncomingHttpHeaders, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import * as core from "@rein/core";
import * as guard from "@rein/guard";
import * as providers from "@rein/providers";
import * as rein from "rein";

type Rein = typeof import("rein");

/** The environment variables `createProvider` reads; each test starts with none of them set. */
const PROVIDER_VARIABLES = [
  "ANTHROPIC_API_KEY",
  "ANTHROPIC_BASE_URL",
  "OPENAI_API_KEY",
  "OPENAI_BASE_URL",
  "REIN_MODEL",
  "REIN_PROVIDER",
] as const;

interface ReceivedRequest {
  path: string;
  headers: IncomingHttpHeaders;
  body: { model: string; messages: { role: string; content: { type: string; text?: string }[] }[] };
}

/** A one-route stand-in for the Anthropic Messages API on 127.0.0.1. */
async function startMessagesServer(text: string): Promise<{ url: string; received: ReceivedRequest[]; server: Server }> {
  const received: ReceivedRequest[] = [];
  const server = createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on("data", (chunk: Buffer) => chunks.push(chunk));
    request.on("end", () => {
      received.push({
        path: request.url ?? "",
        headers: request.headers,
        body: JSON.parse(Buffer.concat(chunks).toString("utf8")) as ReceivedRequest["body"],
      });
      response.writeHead(200, { "content-type": "application/json" });
      response.end(
        JSON.stringify({
          id: "msg_01UmbrellaFixture",
          type: "message",
          role: "assistant",
          model: providers.defaultAnthropicModel,
          content: [{ type: "text", text }],
          stop_reason: "end_turn",
          stop_sequence: null,
          usage: { input_tokens: 9, cache_creation_input_tokens: 0, cache_read_input_tokens: 0, output_tokens: 7 },
        }),
      );
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, received, server };
}

/**
 * Loads a fresh copy of `rein` (and of the packages under it), as a new
 * process would, so the default runtime and its lazily created provider are
 * not shared between tests.
 */
function freshRein(): Rein {
  let loaded: Rein | undefined;
  jest.isolateModules(() => {
    // A require (not import) so jest's isolated registry loads it; the module is CommonJS.
    loaded = require("rein") as Rein;
  });
  return loaded!;
}

const savedEnvironment = new Map<string, string | undefined>();
beforeEach(() => {
  for (const name of PROVIDER_VARIABLES) {
    savedEnvironment.set(name, process.env[name]);
    delete process.env[name];
  }
});
afterEach(() => {
  for (const [name, value] of savedEnvironment) {
    if (value === undefined) delete process.env[name];
    else process.env[name] = value;
  }
});

describe("rein umbrella", () => {
  it("re-exports every runtime export of @rein/core, @rein/guard and @rein/providers, the same objects", () => {
    for (const [packageName, exports] of Object.entries({ "@rein/core": core, "@rein/guard": guard, "@rein/providers": providers })) {
      const missing = Object.keys(exports).filter((name) => !(name in rein));
      expect({ packageName, missing }).toEqual({ packageName, missing: [] });
      for (const name of Object.keys(exports)) {
        expect((rein as Record<string, unknown>)[name]).toBe((exports as Record<string, unknown>)[name]);
      }
    }
  });

  it("import { Agent } from 'rein' works with only ANTHROPIC_API_KEY set (base URL pointed at a local server)", async () => {
    const { url, received, server } = await startMessagesServer("Hi! How can I help?");
    try {
      process.env["ANTHROPIC_API_KEY"] = "dummy-key";
      process.env["ANTHROPIC_BASE_URL"] = url;
      const { Agent } = freshRein();

      const answer = await new (class extends Agent {})().ask("hi");

      expect(answer).toBe("Hi! How can I help?");
      expect(received).toHaveLength(1);
      expect(received[0].path).toBe("/v1/messages");
      expect(received[0].headers.authorization).toBe("Bearer dummy-key");
      expect(received[0].body.model).toBe(providers.defaultAnthropicModel);
      expect(received[0].body.messages).toEqual([{ role: "user", content: [expect.objectContaining({ type: "text", text: "hi" })] }]);
    } finally {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    }
  });

  it("with no provider in the environment, the first request fails with ProviderConfigError saying what to set", async () => {
    const { Agent, ProviderConfigError, MissingProviderError, UsageError, ProviderError } = freshRein();

    const error = await new (class extends Agent {})().ask("hi").catch((caught: unknown) => caught);

    expect(ProviderConfigError.isInstance(error)).toBe(true);
    // The same "no provider" class the Runtime throws; a usage error, not a provider failure.
    expect(MissingProviderError.isInstance(error)).toBe(true);
    expect(UsageError.isInstance(error)).toBe(true);
    expect(ProviderError.isInstance(error)).toBe(false);
    expect((error as Error).message).toBe(
      "No model provider configured: set ANTHROPIC_API_KEY or OPENAI_API_KEY " +
        "(or OPENAI_BASE_URL for an OpenAI-compatible server), or pass { provider }",
    );
  });

  it("constructing an agent reads no environment and needs no provider; an explicit provider wins over the default", async () => {
    const { Agent, Runtime, ScriptedProvider } = freshRein();
    class Greeter extends Agent {}
    expect(() => new Greeter()).not.toThrow();
    const answer = await new Greeter({ runtime: new Runtime({ provider: new ScriptedProvider(["Scripted hello."]) }) }).ask("hi");
    expect(answer).toBe("Scripted hello.");
  });
});
