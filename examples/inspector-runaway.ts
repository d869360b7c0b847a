/**
 * A runaway to watch in the Inspector: the wiki agent of runaway-agent.ts on
 * a model that ignores the situational guidance and delegates to
 * `wiki_agent` from inside `wiki_agent`, answering slowly (400 ms a request,
 * `INSPECTOR_RUNAWAY_DELAY_MS`) so a person can see the graph grow, the Depth
 * meter climb and the recursion ceiling refuse it (the refusals are marked on
 * the llm nodes that asked) — or press Stop first.
 *
 *   rein serve examples/inspector-runaway.ts --inspector --mint-root-budget
 *   # open http://127.0.0.1:8080/inspector, then start a run:
 *   curl -s localhost:8080/v1/agent/run -H 'content-type: application/json' -d '{"entry":"runaway","task":"recursion"}'
 *
 * From this repository: `TSX_TSCONFIG_PATH=tsconfig.test.json node --require tsx/cjs packages/cli/src/bin.ts serve …`.
 */
import { Runtime, type ModelCallOptions, type ModelProvider, type ModelRequest, type ModelResponse, type ModelStreamEvent } from "rein";
import { runawayModel, WikiAgent } from "./runaway-agent";

/** A model that answers like `inner`, each request `delayMs` later (cut short by the run's signal). */
export class SlowModel implements ModelProvider {
  readonly specificationVersion = "rein-model-v1" as const;
  readonly providerId: string;
  readonly modelId: string;

  constructor(
    private readonly inner: ModelProvider,
    private readonly delayMs: number,
  ) {
    this.providerId = inner.providerId;
    this.modelId = inner.modelId;
  }

  async complete(request: ModelRequest, options?: ModelCallOptions): Promise<ModelResponse> {
    await this.#wait(options?.signal);
    return this.inner.complete(request, options);
  }

  async *stream(request: ModelRequest, options?: ModelCallOptions): AsyncIterable<ModelStreamEvent> {
    await this.#wait(options?.signal);
    yield* this.inner.stream(request, options);
  }

  #wait(signal: AbortSignal | undefined): Promise<void> {
    return new Promise((resolve, reject) => {
      if (signal?.aborted) return reject(signal.reason);
      const timer = setTimeout(resolve, this.delayMs);
      signal?.addEventListener("abort", () => (clearTimeout(timer), reject(signal.reason)), { once: true });
    });
  }
}

const delayMs = Number(process.env["INSPECTOR_RUNAWAY_DELAY_MS"] ?? 400);

/** The wiki agent on the slow runaway model. */
export class WatchedRunaway extends WikiAgent {
  static runtime = new Runtime({ provider: new SlowModel(runawayModel(), Number.isFinite(delayMs) ? delayMs : 400) });
}

/** What `rein serve examples/inspector-runaway.ts --inspector` serves. */
export const entries = { runaway: [WatchedRunaway, "wiki_agent"] } as const;
