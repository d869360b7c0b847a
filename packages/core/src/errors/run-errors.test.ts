import {
  GuardError,
  ModelBehaviorError,
  RecursionError,
  ReinError,
  SystemFailureError,
  UnknownToolError,
  UsageError,
  AuthenticationError,
  ContextOverflowError,
  OverloadedError,
  ProviderError,
  RateLimitError,
  CancelledError,
  ContextHeadError,
  ContextProviderError,
  ContextStoreError,
  DecisionError,
  MaxIterationsExceededError,
  MaxStepsExceededError,
  MissingProviderError,
  ProviderConfigError,
  ToolApprovalError,
  ToolArgumentsError,
} from "@rein/guard";
import type { ToolResultBlock } from "../model/content";
import type { ModelRequest } from "../model/model-provider";
import { ScriptedProvider } from "../model/scripted-provider";
import { Runtime } from "../runtime/runtime";
import { tool } from "../tools/tool";
import {
  ForeignDatabaseError,
  SessionExistsError,
  SessionNodeNotFoundError,
  SessionNotFoundError,
  SessionSchemaVersionError,
  SessionStoreClosedError,
  SessionStoreCorruptError,
  SessionStoreError,
} from "@rein/session";

const FAMILIES = { UsageError, ModelBehaviorError, SystemFailureError } as const;
type Family = keyof typeof FAMILIES;

/** Every error class of @rein/core, one instance each, with the family it belongs to (or none). */
function everyCoreError(): [ReinError, Family | undefined][] {
  const details = { provider: "anthropic", status: 429 };
  return [
    [new CancelledError(), undefined],
    [new DecisionError("c", ["a", "b"]), "ModelBehaviorError"],
    [new MaxIterationsExceededError(10), "ModelBehaviorError"],
    [new MaxStepsExceededError(50), "ModelBehaviorError"],
    [new ToolArgumentsError("t", ["x: expected string"]), "ModelBehaviorError"],
    [new ToolApprovalError("t"), "ModelBehaviorError"],
    [new ContextProviderError("p", new Error("down")), "UsageError"],
    [new ContextHeadError("n1", "s1"), "UsageError"],
    [new ContextStoreError("s1"), "UsageError"],
    [new ProviderConfigError("bad"), "UsageError"],
    [new MissingProviderError(), "UsageError"],
    [new ProviderError("p", details), "SystemFailureError"],
    [new AuthenticationError("p", details), "SystemFailureError"],
    [new RateLimitError("p", details), "SystemFailureError"],
    [new OverloadedError("p", details), "SystemFailureError"],
    [new ContextOverflowError("p", details), "SystemFailureError"],
    [new SessionStoreError("s", "a.db"), "SystemFailureError"],
    [new SessionStoreCorruptError("a.db", new Error("bad")), "SystemFailureError"],
    [new ForeignDatabaseError("a.db", ["users"]), "SystemFailureError"],
    [new SessionSchemaVersionError("a.db", 7, 1), "SystemFailureError"],
    [new SessionNotFoundError("s1", "a.db"), "SystemFailureError"],
    [new SessionExistsError("s1", "a.db"), "SystemFailureError"],
    [new SessionNodeNotFoundError("s1", "n1", "a.db"), "SystemFailureError"],
    [new SessionStoreClosedError("a.db"), "SystemFailureError"],
  ];
}

describe("core error families", () => {
  it("puts every core error in exactly one family by whose fault it is (CancelledError in none), named after its class", () => {
    for (const [error, family] of everyCoreError()) {
      const memberOf = (Object.keys(FAMILIES) as Family[]).filter((name) => FAMILIES[name].isInstance(error));
      expect({ name: error.name, memberOf }).toEqual({ name: error.constructor.name, memberOf: family === undefined ? [] : [family] });
      expect(ReinError.isInstance(error)).toBe(true);
      expect(GuardError.isInstance(error)).toBe(false);
    }
  });

  it("no provider is one class: MissingProviderError is a ProviderConfigError and a UsageError, not a ProviderError", () => {
    const missing = new MissingProviderError();
    expect(MissingProviderError.isInstance(missing)).toBe(true);
    expect(ProviderConfigError.isInstance(missing)).toBe(true);
    expect(UsageError.isInstance(missing)).toBe(true);
    expect(ProviderError.isInstance(missing)).toBe(false);
    expect(SystemFailureError.isInstance(missing)).toBe(false);
    expect(missing.name).toBe("MissingProviderError");
    expect(missing.provider).toBe("none");
    expect(missing.message).toBe(
      "No model provider configured: set ANTHROPIC_API_KEY or OPENAI_API_KEY (with the `rein` package), " +
        "or pass { provider } to the Runtime",
    );
    expect(new MissingProviderError("set X").message).toBe("set X");
    // An invalid configuration is not a missing one.
    const invalid = new ProviderConfigError("REIN_PROVIDER must be …", { provider: "openai" });
    expect(MissingProviderError.isInstance(invalid)).toBe(false);
    expect(invalid).toMatchObject({ name: "ProviderConfigError", provider: "openai" });
  });

  it("ToolApprovalError carries the tool and whether an approver was configured", () => {
    const denied = new ToolApprovalError("deploy");
    expect(denied).toMatchObject({ name: "ToolApprovalError", toolName: "deploy", approverConfigured: true });
    expect(denied.message).toBe("calling 'deploy' requires approval and it was not approved");
    const unconfigured = new ToolApprovalError("deploy", { approverConfigured: false });
    expect(unconfigured.approverConfigured).toBe(false);
    expect(unconfigured.message).toBe(
      "calling 'deploy' requires approval and it was not approved (no approveToolCall was configured on the agent)",
    );
  });

  it("ProviderError.isInstance matches its subclasses; sibling subclasses never match each other", () => {
    const details = { provider: "openai", status: 429 };
    const rateLimit = new RateLimitError("slow down", { ...details, retryAfterSeconds: 3 });
    expect(ProviderError.isInstance(rateLimit)).toBe(true);
    expect(SystemFailureError.isInstance(rateLimit)).toBe(true);
    expect(RateLimitError.isInstance(rateLimit)).toBe(true);
    expect(RateLimitError.isInstance(new AuthenticationError("no", { provider: "openai", status: 401 }))).toBe(false);
    expect(AuthenticationError.isInstance(rateLimit)).toBe(false);
    expect(rateLimit).toMatchObject({ provider: "openai", status: 429, retryAfterSeconds: 3 });
  });

  it("with every class minified to 't' and loaded from a duplicate copy, RateLimitError does not match an AuthenticationError", () => {
    // Regression: isInstance compared constructor names, so after minification every class matched every other.
    let copy: typeof import("../../../guard/src/errors/provider-errors") | undefined;
    jest.isolateModules(() => {
      copy = require("../../../guard/src/errors/provider-errors") as typeof import("../../../guard/src/errors/provider-errors");
    });
    const errors = copy!;
    for (const errorClass of [errors.ProviderError, errors.AuthenticationError, errors.RateLimitError, errors.OverloadedError]) {
      Object.defineProperty(errorClass, "name", { value: "t" });
    }
    const auth = new errors.AuthenticationError("bad key", { provider: "anthropic", status: 401 });
    expect(errors.AuthenticationError.name).toBe("t");
    expect(auth.name).toBe("AuthenticationError");
    expect(errors.RateLimitError.isInstance(auth)).toBe(false);
    expect(errors.OverloadedError.isInstance(auth)).toBe(false);
    expect(errors.ProviderError.isInstance(auth)).toBe(true);
    // Across the copies, both ways.
    expect(RateLimitError.isInstance(auth)).toBe(false);
    expect(AuthenticationError.isInstance(auth)).toBe(true);
    expect(ProviderError.isInstance(auth)).toBe(true);
    expect(SystemFailureError.isInstance(auth)).toBe(true);
    const local = new RateLimitError("slow down", { provider: "openai", status: 429 });
    expect(errors.RateLimitError.isInstance(local)).toBe(true);
    expect(errors.ProviderError.isInstance(local)).toBe(true);
    expect(errors.AuthenticationError.isInstance(local)).toBe(false);
  });
});

/** The tool results of the user turn of one request. */
function toolResults(request: ModelRequest): ToolResultBlock[] {
  const user = request.messages[request.messages.length - 1];
  return user.content.filter((block): block is ToolResultBlock => block.type === "tool_result");
}

describe("error families in the runtime", () => {
  it("a tool that throws UnknownToolError twice gets two tool errors, not a guard refusal that ends the run", async () => {
    // Regression: UnknownToolError was a GuardError, so the second one aborted the run as a repeated refusal.
    const lookup = tool({
      name: "lookup",
      description: "Looks up a sub-tool.",
      execute: () => {
        throw new UnknownToolError("web_search", ["lookup"]);
      },
    });
    const model = new ScriptedProvider([{ toolCalls: [{ name: "lookup" }] }, { toolCalls: [{ name: "lookup" }] }, "done"]);
    const result = await new Runtime({ provider: model }).exec({ content: "x", tools: [lookup] });
    expect(result.text).toBe("done");
    for (const request of model.requests.slice(1)) {
      const [block] = toolResults(request);
      expect(block.isError).toBe(true);
      expect(String(block.content)).toContain('Tool "web_search" does not exist');
      expect(String(block.content)).not.toMatch(/^Refused/);
    }
  });

  it("a tool that throws a GuardError twice still ends the run (the refusal rule is unchanged)", async () => {
    const deep = tool({
      name: "deep",
      description: "Always refused.",
      execute: () => {
        throw new RecursionError("A.run", 6, 5);
      },
    });
    const model = new ScriptedProvider([{ toolCalls: [{ name: "deep" }] }, { toolCalls: [{ name: "deep" }] }, "done"]);
    const error = await new Runtime({ provider: model }).exec({ content: "x", tools: [deep] }).catch((caught: unknown) => caught);
    expect(RecursionError.isInstance(error)).toBe(true);
  });
});
