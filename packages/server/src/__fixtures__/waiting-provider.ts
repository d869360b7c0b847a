import { Agent, Runtime, type ModelCallOptions, type ModelProvider, type ModelRequest, type ModelResponse, type ModelStreamEvent } from "rein";
import type { EntryInit } from "../entries";

/**
 * A model that never answers: each request waits until its signal aborts,
 * then rejects with the signal's reason. `started` resolves on the first
 * request; `aborted` with the abort reason (never, when the request got no
 * signal).
 */
export class WaitingProvider implements ModelProvider {
  readonly specificationVersion = "rein-model-v1" as const;
  readonly providerId = "waiting";
  readonly modelId = "waiting";
  readonly started: Promise<void>;
  readonly aborted: Promise<unknown>;
  private markStarted!: () => void;
  private markAborted!: (reason: unknown) => void;

  constructor() {
    this.started = new Promise((resolve) => (this.markStarted = resolve));
    this.aborted = new Promise((resolve) => (this.markAborted = resolve));
  }

  complete(_request: ModelRequest, options?: ModelCallOptions): Promise<ModelResponse> {
    this.markStarted();
    return new Promise((_resolve, reject) => {
      const signal = options?.signal;
      if (signal === undefined) return;
      const stop = () => {
        this.markAborted(signal.reason);
        reject(signal.reason);
      };
      if (signal.aborted) stop();
      else signal.addEventListener("abort", stop, { once: true });
    });
  }

  async *stream(request: ModelRequest, options?: ModelCallOptions): AsyncIterable<ModelStreamEvent> {
    yield { type: "response", response: await this.complete(request, options) };
  }
}

/** An agent that asks the model once. */
export class Asker extends Agent {
  async question(task: string): Promise<string> {
    return this.ask(task);
  }
}

/**
 * Entries whose model waits: `wait` builds its agent on `provider()` (a new
 * provider per request, or a shared one a test holds).
 */
export function waitingEntries(provider: () => WaitingProvider) {
  return {
    wait: [({ onEvent }: EntryInit) => new Asker({ runtime: new Runtime({ provider: provider(), onEvent }) }), "question"],
  } as const;
}
