/**
 * A run whose AbortSignal fires is cancelled — whatever reason the signal
 * carries (docs/core/agent.md promises it): `abort(new Error("stop"))` is a
 * cancel like `abort()`, in the RunResult, a turn's status and the nodes.
 */
import { Agent } from "../agent/agent";
import { ChatAgent } from "../agent/chat-agent";
import { Context } from "../context/context";
import type { ModelCallOptions, ModelProvider, ModelRequest, ModelResponse, ModelStreamEvent } from "../model/model-provider";
import { InMemorySessionStore } from "@rein/session";
import { Runtime } from "./runtime";

/** A provider that answers only when its signal aborts (with the signal's reason), and says when it was asked. */
class HangingProvider implements ModelProvider {
  readonly specificationVersion = "rein-model-v1" as const;
  readonly providerId = "hanging";
  readonly modelId = "hanging";
  asked!: () => void;
  readonly started = new Promise<void>((resolve) => (this.asked = resolve));
  async *stream(request: ModelRequest, options: ModelCallOptions = {}): AsyncIterable<ModelStreamEvent> {
    yield { type: "response", response: await this.complete(request, options) };
  }
  complete(_request: ModelRequest, options: ModelCallOptions = {}): Promise<ModelResponse> {
    this.asked();
    return new Promise((_resolve, reject) => options.signal?.addEventListener("abort", () => reject(options.signal!.reason), { once: true }));
  }
}

class Waiter extends Agent {}

describe.each([
  ["abort() with no reason", (controller: AbortController) => controller.abort()],
  ["abort(new Error('stop'))", (controller: AbortController) => controller.abort(new Error("stop"))],
  ["abort('a string reason')", (controller: AbortController) => controller.abort("a string reason")],
])("a run's signal fired by %s", (_name, fire) => {
  it("ends the run cancelled, not error", async () => {
    const provider = new HangingProvider();
    const controller = new AbortController();
    const run = new Waiter({ runtime: new Runtime({ provider }) }).stream("Wait.", { signal: controller.signal });
    await provider.started;
    fire(controller);
    const result = await run.result;
    expect(result.status).toBe("cancelled");
  });

  it("ends a turn cancelled", async () => {
    const provider = new HangingProvider();
    const controller = new AbortController();
    const store = new InMemorySessionStore();
    store.createSession("s");
    class Chat extends ChatAgent {}
    const turn = new Chat({ runtime: new Runtime({ provider }), context: Context.forSession(store, "s") }).runTurn({ input: "Wait." }, { signal: controller.signal });
    await provider.started;
    fire(controller);
    expect((await turn).status).toBe("cancelled");
  });
});
