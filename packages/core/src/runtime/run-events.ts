import type { Logger } from "pino";
import type { RunEvent, RunEventBody, RunEventListener } from "./runtime-events";

/**
 * Where one model-tool loop reports: its own runtime's logger and `onEvent`
 * listener, chained to the sink of the loop it runs in, so a nested agent's
 * events reach its own runtime's listener and every listener up the chain
 * (a stream of an outer run included). Each sink knows the agent its events
 * come from: an event is stamped with the producing agent's name and path.
 * @internal
 */
export class RunEvents {
  /** True when some listener up the chain will receive events: callers skip building events otherwise. */
  readonly listening: boolean;
  /** True when a listener up the chain may hold the run back ({@link ready}). */
  private readonly gated: boolean;

  private constructor(
    readonly logger: Logger,
    private readonly listener: RunEventListener | undefined,
    private readonly parent: RunEvents | undefined,
    /** The agent this sink's events come from. */
    readonly agent: string,
    readonly agentPath: readonly string[],
    /** A stream's backpressure: a promise while its buffer is full. */
    private readonly gate?: () => Promise<void> | undefined,
  ) {
    this.listening = listener !== undefined || parent?.listening === true;
    this.gated = gate !== undefined || parent?.gated === true;
  }

  /** The sink of an outermost run of `agent` (a class name; `""` for a bare runtime). */
  static root(logger: Logger, listener: RunEventListener | undefined, agent = ""): RunEvents {
    return new RunEvents(logger, listener, undefined, agent, agent === "" ? [] : [agent]);
  }

  /**
   * The sink of work nested in this one's run, using the nested runtime's
   * logger and listener, for `agent` (default: this sink's). Reuses this
   * sink when nothing differs, and never calls one listener twice for one
   * event.
   */
  nested(logger: Logger, listener: RunEventListener | undefined, agent: string = this.agent): RunEvents {
    const own = listener !== undefined && this.has(listener) ? undefined : listener;
    if (own === undefined && logger === this.logger && agent === this.agent) return this;
    const path = agent === this.agent ? this.agentPath : [...this.agentPath, agent];
    return new RunEvents(logger, own, this, agent, path);
  }

  /** A sink that also delivers to `listener` (one run's stream), held back by `gate` while its buffer is full. */
  withListener(listener: RunEventListener, gate: () => Promise<void> | undefined): RunEvents {
    return new RunEvents(this.logger, listener, this, this.agent, this.agentPath, gate);
  }

  /**
   * Stamps `body` with this sink's agent and delivers it to every listener
   * up the chain, innermost first. A listener that throws is logged and
   * skipped.
   */
  emit(body: RunEventBody): void {
    const event = { ...body, agent: this.agent, agentPath: this.agentPath } as RunEvent;
    for (let sink: RunEvents | undefined = this; sink !== undefined; sink = sink.parent) {
      const listener = sink.listener;
      if (listener === undefined) continue;
      try {
        listener(event);
      } catch (error) {
        sink.logger.warn({ err: error, event: event.type }, "onEvent listener threw; ignored");
      }
    }
  }

  /**
   * Undefined when every stream up the chain has room; otherwise a promise
   * that resolves once they have. The run awaits it at safe points (before
   * a model request or a tool call, between stream chunks).
   */
  ready(): Promise<void> | undefined {
    if (!this.gated) return undefined;
    for (let sink: RunEvents | undefined = this; sink !== undefined; sink = sink.parent) {
      const waiting = sink.gate?.();
      if (waiting !== undefined) return waiting.then(() => this.ready());
    }
    return undefined;
  }

  private has(listener: RunEventListener): boolean {
    for (let sink: RunEvents | undefined = this; sink !== undefined; sink = sink.parent) if (sink.listener === listener) return true;
    return false;
  }
}
