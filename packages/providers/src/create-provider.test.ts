import { MissingProviderError, ProviderError, UsageError } from "@rein/core";
import { jsonFixture, useFixtureServer } from "./__fixtures__/fixture-server";
import { AnthropicProvider } from "./anthropic/anthropic-provider";
import { createProvider } from "./create-provider";
import { OpenAIProvider } from "./openai/openai-provider";
import { MissingProviderError as ReexportedMissingProviderError, ProviderConfigError } from "./provider-config-error";

const hello = { system: "Be brief.", messages: [{ role: "user" as const, content: [{ type: "text" as const, text: "Hi" }] }], tools: [] };

const server = useFixtureServer();

describe("createProvider", () => {
  it("picks Anthropic from ANTHROPIC_API_KEY with the default model", () => {
    const provider = createProvider({ ANTHROPIC_API_KEY: "test-key" });
    expect(provider).toBeInstanceOf(AnthropicProvider);
    expect(provider.modelId).toBe("claude-sonnet-5-5");
  });

  it("honours ANTHROPIC_BASE_URL and REIN_MODEL, sending the key from the given env", async () => {
    server().reply({ json: jsonFixture(`${__dirname}/anthropic`, "messages-final-text.json") });
    const provider = createProvider({ ANTHROPIC_API_KEY: "test-key", ANTHROPIC_BASE_URL: server().url, REIN_MODEL: "test-model" });
    expect(provider.modelId).toBe("test-model");
    await provider.complete(hello);
    expect(server().requests[0].path).toBe("/v1/messages");
    expect(server().requests[0].headers.authorization).toBe("Bearer test-key");
    expect(server().requests[0].body.model).toBe("test-model");
  });

  it("picks OpenAI from OPENAI_API_KEY with the default model", () => {
    const provider = createProvider({ OPENAI_API_KEY: "test-key" });
    expect(provider).toBeInstanceOf(OpenAIProvider);
    expect(provider.modelId).toBe("gpt-4.1");
    expect((provider as OpenAIProvider).api).toBe("chat");
  });

  it("picks OpenAI from OPENAI_BASE_URL alone, for an OpenAI-compatible server that needs no key", async () => {
    server().reply({ json: jsonFixture(`${__dirname}/openai`, "chat-final-text.json") });
    const provider = createProvider({ OPENAI_BASE_URL: `${server().url}/v1`, REIN_MODEL: "qwen3:8b" });
    expect(provider).toBeInstanceOf(OpenAIProvider);
    expect((await provider.complete(hello)).stopReason).toBe("end_turn");
    expect(server().requests[0].path).toBe("/v1/chat/completions");
    expect(server().requests[0].body.model).toBe("qwen3:8b");
  });

  it("prefers Anthropic when both are configured, unless REIN_PROVIDER says openai", () => {
    const both = { ANTHROPIC_API_KEY: "test-key", OPENAI_API_KEY: "test-key" };
    expect(createProvider(both)).toBeInstanceOf(AnthropicProvider);
    expect(createProvider({ ...both, REIN_PROVIDER: "openai" })).toBeInstanceOf(OpenAIProvider);
  });

  it("throws MissingProviderError (a ProviderConfigError, a usage error) saying what to set when nothing is configured (empty values count as unset)", () => {
    let thrown: unknown;
    try {
      createProvider({ ANTHROPIC_API_KEY: "", OPENAI_API_KEY: "  ", REIN_MODEL: "test-model" });
    } catch (error) {
      thrown = error;
    }
    expect(thrown).toBeInstanceOf(ProviderConfigError);
    expect(ProviderConfigError.isInstance(thrown)).toBe(true);
    // The one "no provider" class, shared with the Runtime; a configuration mistake, not a provider failure.
    expect(MissingProviderError.isInstance(thrown)).toBe(true);
    expect(ReexportedMissingProviderError).toBe(MissingProviderError);
    expect(UsageError.isInstance(thrown)).toBe(true);
    expect(ProviderError.isInstance(thrown)).toBe(false);
    expect((thrown as Error).name).toBe("MissingProviderError");
    expect((thrown as Error).message).toBe(
      "No model provider configured: set ANTHROPIC_API_KEY or OPENAI_API_KEY " +
        "(or OPENAI_BASE_URL for an OpenAI-compatible server), or pass { provider }",
    );
  });

  it("rejects a REIN_PROVIDER that is unknown or not configured", () => {
    expect(() => createProvider({ REIN_PROVIDER: "mistral" })).toThrow('REIN_PROVIDER must be "anthropic" or "openai"');
    expect(() => createProvider({ REIN_PROVIDER: "anthropic", OPENAI_API_KEY: "test-key" })).toThrow(
      "REIN_PROVIDER is anthropic but ANTHROPIC_API_KEY is not set",
    );
    expect(() => createProvider({ REIN_PROVIDER: "openai", ANTHROPIC_API_KEY: "test-key" })).toThrow(ProviderConfigError);
    let invalid: unknown;
    try {
      createProvider({ REIN_PROVIDER: "mistral", ANTHROPIC_API_KEY: "test-key" });
    } catch (error) {
      invalid = error;
    }
    // Invalid configuration is a ProviderConfigError (a usage error) but not the missing-provider one.
    expect(ProviderConfigError.isInstance(invalid)).toBe(true);
    expect(UsageError.isInstance(invalid)).toBe(true);
    expect(MissingProviderError.isInstance(invalid)).toBe(false);
    expect((invalid as Error).name).toBe("ProviderConfigError");
  });
});
