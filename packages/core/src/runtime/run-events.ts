import type { Logger } from "pino";
import type { RuntimeEvent, RuntimeEventListener } from "./runtime-events";

/**
 * Where one model-tool loop reports: its own runtime's logger and `onEvent`
 * listener, chained to the sink of the loop it runs in, so a nested agent's
 * events reach its own runtime's listener and every listener up the chain.
 * @internal
 */
export class RunEvents {
  /** True when some listener up the chain will receive events: callers skip building events otherwise. */
  readonly listening: boolean;

  private constructor(
    readonly logger: Logger,
    private readonly listener: RuntimeEventListener | undefined,
    private readonly parent: RunEvents | undefined,
  ) {
    this.listening = listener !== undefined || parent?.listening === true;
  }

  /** The sink of an outermost run. */
  static root(logger: Logger, listener: RuntimeEventListener | undefined): RunEvents {
    return new RunEvents(logger, listener, undefined);
  }

  /**
   * The sink of a loop nested in this one's run, using the nested runtime's
   * logger and listener. Reuses this sink when nothing differs, and never
   * calls one listener twice for one event.
   */
  nested(logger: Logger, listener: RuntimeEventListener | undefined): RunEvents {
    const own = listener !== undefined && this.has(listener) ? undefined : listener;
    if (own === undefined && logger === this.logger) return this;
    return new RunEvents(logger, own, this);
  }

  /** Delivers `event` to every listener up the chain, innermost first. A listener that throws is logged and skipped. */
  emit(event: RuntimeEvent): void {
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

  private has(listener: RuntimeEventListener): boolean {
    for (let sink: RunEvents | undefined = this; sink !== undefined; sink = sink.parent) if (sink.listener === listener) return true;
    return false;
  }
}
