import type { ExecResult } from "./model-tool-loop";
import type { RunResult } from "./run-result";
import type { RunEvent, RunEventListener } from "./runtime-events";

/** Events a stream holds for a consumer that is behind; at this size the run waits (see {@link RunStream}). */
export const RUN_STREAM_BUFFER = 1024;

/**
 * One run as it happens: an async iterable of its {@link RunEvent}s (its
 * nested agents' included, each stamped with the agent that produced it),
 * in causal order — a `tool-result` never before its `tool-call`, every
 * `text-delta` of a request before its `model-response`, `run-finish` last —
 * plus `.result` and `.text`.
 *
 * **Backpressure.** The stream holds at most {@link RUN_STREAM_BUFFER}
 * events. While an iterator is open and the buffer is full, the run waits at
 * its next safe point (between stream chunks, before a model request or a
 * tool call) until the consumer catches up, so a slow consumer never makes
 * the run buffer without bound. A stream nobody iterates never holds the run
 * up: while no iterator is open, a full buffer drops its oldest events
 * (counted in {@link droppedEvents}). Breaking out of the iteration stops
 * the buffering; the run goes on (cancel it with the `signal` option).
 *
 * **Errors.** `.result` always resolves, with `status: "error"` or
 * `"cancelled"` and the `error` when the run did not complete; `.text`
 * rejects with that error; the iteration yields every event (`run-finish`
 * included) and then throws it.
 *
 * @example
 * ```ts
 * const run = agent.stream("Summarise the report.");
 * for await (const event of run) {
 *   if (event.type === "text-delta") process.stdout.write(event.text);
 * }
 * const { usage, requests } = await run.result;
 * ```
 */
export class RunStream implements AsyncIterable<RunEvent> {
  /** The run's result; resolves whether or not it completed. */
  readonly result: Promise<RunResult>;
  #text: Promise<string> | undefined;
  #buffer: RunEvent[] = [];
  #head = 0;
  #iterating = false;
  #detached = false;
  #finished = false;
  #error: unknown = undefined;
  #failed = false;
  #dropped = 0;
  /** The `next()` calls waiting for an event (several may wait at once: each is woken, and looks again). */
  readonly #waiting: (() => void)[] = [];
  /** The run waiting for room. */
  #room: { promise: Promise<void>; resolve: () => void } | undefined;

  /** @internal `start` runs the loop with the stream's listener. */
  constructor(start: (listener: { deliver: RunEventListener; gate: () => Promise<void> | undefined }) => Promise<ExecResult>) {
    const run = start({ deliver: (event) => this.#deliver(event), gate: () => this.#gate() });
    this.result = run.then(
      (outcome) => {
        this.#finish();
        return outcome.run;
      },
      (error: unknown) => {
        this.#failed = true;
        this.#error = error;
        this.#finish();
        return this.#failedResult ?? { text: "", status: "error", usage: EMPTY_USAGE, requests: 0, toolCalls: 0, error };
      },
    );
  }

  /** The final answer's text; rejects with the run's error when it did not complete. */
  get text(): Promise<string> {
    // Made on first use: a rejection nobody asked for is never left unhandled.
    return (this.#text ??= this.result.then((result) => {
      if (result.status !== "completed") throw result.error;
      return result.text;
    }));
  }

  /** Events dropped because the buffer was full while no iterator was open. */
  get droppedEvents(): number {
    return this.#dropped;
  }

  /** Events delivered and not yet taken by the consumer. */
  get buffered(): number {
    return this.#buffer.length - this.#head;
  }

  [Symbol.asyncIterator](): AsyncIterator<RunEvent> {
    if (this.#iterating) throw new TypeError("A RunStream can be iterated once; keep the events you need from the first iteration");
    this.#iterating = true;
    return {
      next: async (): Promise<IteratorResult<RunEvent>> => {
        for (;;) {
          if (this.#head < this.#buffer.length) {
            const event = this.#buffer[this.#head++]!;
            if (this.#head > 256 && this.#head * 2 > this.#buffer.length) this.#compact();
            this.#releaseRoom();
            return { value: event, done: false };
          }
          if (this.#finished) {
            if (this.#failed && !this.#detached) {
              this.#detached = true;
              throw this.#error;
            }
            return { value: undefined, done: true };
          }
          await new Promise<void>((resolve) => this.#waiting.push(resolve));
        }
      },
      return: async (): Promise<IteratorResult<RunEvent>> => {
        this.#detach();
        return { value: undefined, done: true };
      },
    };
  }

  /** The result the run reported in its `run-finish` event (used when it failed). */
  #failedResult: RunResult | undefined;

  #deliver(event: RunEvent): void {
    // The stream's own run finishes last: its result is the last run-finish delivered.
    if (event.type === "run-finish") this.#failedResult = event.result;
    if (this.#detached) return;
    if (!this.#iterating && this.buffered >= RUN_STREAM_BUFFER) {
      this.#head++;
      this.#dropped++;
      if (this.#head > 256 && this.#head * 2 > this.#buffer.length) this.#compact();
    }
    this.#buffer.push(event);
    this.#wakeAll();
  }

  #gate(): Promise<void> | undefined {
    if (!this.#iterating || this.#detached || this.buffered < RUN_STREAM_BUFFER) return undefined;
    if (this.#room === undefined) {
      let resolve!: () => void;
      const promise = new Promise<void>((done) => (resolve = done));
      this.#room = { promise, resolve };
    }
    return this.#room.promise;
  }

  #releaseRoom(): void {
    if (this.#room !== undefined && this.buffered < RUN_STREAM_BUFFER) {
      const room = this.#room;
      this.#room = undefined;
      room.resolve();
    }
  }

  #compact(): void {
    this.#buffer = this.#buffer.slice(this.#head);
    this.#head = 0;
  }

  #detach(): void {
    this.#detached = true;
    this.#buffer = [];
    this.#head = 0;
    const room = this.#room;
    this.#room = undefined;
    room?.resolve();
  }

  #finish(): void {
    this.#finished = true;
    this.#wakeAll();
  }

  #wakeAll(): void {
    for (const wake of this.#waiting.splice(0)) wake();
  }
}

const EMPTY_USAGE = Object.freeze({ inputTokens: 0, outputTokens: 0, cachedInputTokens: 0, cacheCreationInputTokens: 0 });
