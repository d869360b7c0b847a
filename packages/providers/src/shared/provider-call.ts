import { ProviderError, ProviderTimeoutError, type ModelRetry, type Usage } from "@rein/core";
import { redactError, redactValue } from "./redact-secrets";
import type { RequestLimits } from "./request-limits";
import { parseRetryAfter, toProviderError, type FailureInfo } from "./to-provider-error";
import { streamEndedEarly } from "./wire-shape";

/** What a {@link ProviderCall} needs to know about the adapter making it. */
export interface ProviderCallContext {
  /** Provider name in messages and errors (`"anthropic"`, `"openai"`). */
  readonly provider: string;
  /** The class whose settings hold the limits, for messages (`"AnthropicProvider"`). */
  readonly settingsOwner: string;
  readonly limits: RequestLimits;
  /** Credentials to keep out of every error (the API key the client sends). */
  readonly secrets: readonly string[];
  /** What an SDK error says, in the SDK-neutral form. */
  readonly describeFailure: (error: unknown) => FailureInfo;
}

/** Per-request options handed to the SDK: our signal, and the SDK's own retries and timer out of the way. */
export interface SdkRequestOptions {
  readonly signal: AbortSignal;
  readonly maxRetries: 0;
  readonly timeout: number;
}

/** A timer that never fires before ours: the SDK's, which only covers the wait for headers. */
const sdkTimerSlackMs = 60_000;

/**
 * One `complete()` or `stream()` call of an adapter, bounded as a whole: a
 * timer for `timeoutMs` from the start, an idle timer while a stream is
 * read, retries with their waits, and the caller's signal, all through one
 * AbortController whose signal goes to the SDK. Aborting it makes the SDK
 * abort its fetch, which closes the connection; every wait here also races
 * the signal, so the call settles on time even if something ignores it.
 * Failures come out through {@link failure}: the abort reason when the call
 * was aborted, else a typed, redacted `ProviderError`.
 */
export class ProviderCall {
  private readonly controller = new AbortController();
  private readonly startedAt = Date.now();
  private readonly timer: ReturnType<typeof setTimeout>;
  private readonly detachCaller: () => void;
  /** The timeout this call was aborted with, when one of its limits (not the caller) ended it. */
  private limitReached: ProviderTimeoutError | undefined;

  constructor(
    private readonly context: ProviderCallContext,
    callerSignal: AbortSignal | undefined,
    private readonly onRetry?: (retry: ModelRetry) => void,
  ) {
    const { limits, provider, settingsOwner } = context;
    this.timer = setTimeout(() => {
      this.abortOnLimit(
        new ProviderTimeoutError(
          `${provider} request timed out: no complete answer within timeoutMs = ${limits.timeoutMs} ms, ` +
            `so it was aborted — raise timeoutMs in the ${settingsOwner} settings if answers really take longer`,
          { provider, limit: "timeoutMs", timeoutMs: limits.timeoutMs },
        ),
      );
    }, limits.timeoutMs);
    // The request's own socket keeps the process alive while it runs; an abandoned stream must not.
    this.timer.unref?.();
    const forwardAbort = () => this.controller.abort(callerSignal?.reason);
    if (callerSignal?.aborted) forwardAbort();
    callerSignal?.addEventListener("abort", forwardAbort, { once: true });
    this.detachCaller = () => callerSignal?.removeEventListener("abort", forwardAbort);
  }

  /** Aborts the call because one of its own limits ran out (not the caller). */
  private abortOnLimit(reason: ProviderTimeoutError): void {
    if (this.signal.aborted) return;
    this.limitReached = reason;
    this.controller.abort(reason);
  }

  /** Fires when the caller aborts or a limit runs out. */
  get signal(): AbortSignal {
    return this.controller.signal;
  }

  private get remainingMs(): number {
    return this.context.limits.timeoutMs - (Date.now() - this.startedAt);
  }

  private requestOptions(): SdkRequestOptions {
    return { signal: this.signal, maxRetries: 0, timeout: Math.max(1, Math.ceil(this.remainingMs)) + sdkTimerSlackMs };
  }

  /**
   * Sends a request (`send` is called once per attempt), retrying what is
   * worth retrying up to `maxRetries`: waits what the server's
   * `retry-after` says when that fits `maxRetryAfterMs` and the time left,
   * else fails at once with the typed error.
   */
  async send<Result>(send: (options: SdkRequestOptions) => Promise<Result>): Promise<Result> {
    const { limits } = this.context;
    for (let attempt = 0; ; attempt++) {
      try {
        return await this.race(send(this.requestOptions()));
      } catch (error) {
        if (this.signal.aborted || ProviderError.isInstance(error)) throw error;
        const info = this.context.describeFailure(error);
        if (attempt >= limits.maxRetries || !shouldRetry(info)) throw this.toError(info);
        const retryAfterSeconds = parseRetryAfter(info.headers);
        const waitMs = retryAfterSeconds === undefined ? backoffMs(attempt) : retryAfterSeconds * 1000;
        // A wait we will not sleep through: the caller hears it now, with the wait asked for.
        if (waitMs > limits.maxRetryAfterMs || waitMs >= this.remainingMs) throw this.toError(info);
        this.reportRetry({ attempt: attempt + 1, waitMs, fromRetryAfter: retryAfterSeconds !== undefined, status: info.status });
        await this.race(sleep(waitMs, this.signal));
      }
    }
  }

  /** Tells the caller a retry is coming and how long it waits first; a listener that throws is ignored. */
  private reportRetry({ attempt, waitMs, fromRetryAfter, status }: { attempt: number; waitMs: number; fromRetryAfter: boolean; status: number | undefined }): void {
    if (this.onRetry === undefined) return;
    const reason = status === undefined ? "connection failed" : status === 429 ? "429 rate limited" : `${status} from the server`;
    const retry: ModelRetry = { provider: this.context.provider, attempt, waitMs: Math.round(waitMs), fromRetryAfter, reason, ...(status === undefined ? {} : { status }) };
    try {
      this.onRetry(retry);
    } catch {
      /* a reporting listener must not change the call */
    }
  }

  /**
   * The events of a stream, each awaited for at most `idleTimeoutMs` (the
   * time the consumer holds an event does not count). Stopping early
   * (`break`, an error) returns the SDK's iterator, which aborts its request.
   * `endEvent` names the event a complete stream ends with, for the error
   * when the connection breaks before it.
   */
  async *read<Event>(events: AsyncIterable<Event>, endEvent: string): AsyncGenerator<Event, void, undefined> {
    const { limits, provider, settingsOwner } = this.context;
    const iterator = events[Symbol.asyncIterator]();
    let finished = false;
    let count = 0;
    try {
      for (;;) {
        const idle = setTimeout(() => {
          this.abortOnLimit(
            new ProviderTimeoutError(
              `${provider} stream went silent for idleTimeoutMs = ${limits.idleTimeoutMs} ms before its end, ` +
                `so the request was aborted — raise idleTimeoutMs in the ${settingsOwner} settings if the model ` +
                `really pauses that long (reasoning models can)`,
              { provider, limit: "idleTimeoutMs", timeoutMs: limits.idleTimeoutMs },
            ),
          );
        }, limits.idleTimeoutMs);
        idle.unref?.();
        let next: IteratorResult<Event>;
        try {
          next = await this.race(iterator.next());
        } catch (error) {
          throw this.readFailure(error, endEvent, count);
        } finally {
          clearTimeout(idle);
        }
        if (next.done === true) {
          finished = true;
          return;
        }
        count++;
        yield next.value;
      }
    } finally {
      // Not awaited: a read that ignores the abort must not keep this call pending.
      if (!finished) void Promise.resolve(iterator.return?.()).catch(() => undefined);
    }
  }

  /**
   * A stream that fails mid-way without an API error (the connection reset,
   * an event that is not JSON) fails as a stream that ended early or a
   * malformed event, not as a vague request failure.
   */
  private readFailure(error: unknown, endEvent: string, events: number): unknown {
    if (this.signal.aborted || ProviderError.isInstance(error)) return error;
    const { provider } = this.context;
    if (this.context.describeFailure(error).kind === "api") return error;
    if (error instanceof SyntaxError) {
      return new ProviderError(`${provider} sent a malformed stream event: ${error.message}`, { provider, cause: error });
    }
    return streamEndedEarly(provider, endEvent, events, error);
  }

  /** Throws the abort reason when the call was aborted (the SDKs end an aborted stream quietly). */
  throwIfAborted(): void {
    this.signal.throwIfAborted();
  }

  /** Whether the caller aborted the call (not one of its own limits: `timeoutMs`, `idleTimeoutMs`). */
  abortedByCaller(): boolean {
    return this.signal.aborted && this.signal.reason !== this.limitReached;
  }

  /**
   * What the call rejects with: the caller's abort reason or the
   * {@link ProviderTimeoutError} when the call was aborted, else the typed,
   * redacted error for what was thrown. `reportedUsage`, the counts a
   * stream reported before it failed, goes on the `ProviderError` as its
   * `reportedUsage` (never on the caller's own abort reason).
   */
  failure(error: unknown, reportedUsage?: Usage): unknown {
    if (this.signal.aborted) {
      const reason: unknown = this.signal.reason;
      return this.limitReached !== undefined && reason === this.limitReached ? this.limitReached.withReportedUsage(reportedUsage) : reason;
    }
    const failed = ProviderError.isInstance(error) ? redactError(error, this.context.secrets) : this.toError(this.context.describeFailure(error));
    return failed.withReportedUsage(reportedUsage);
  }

  /** Stops the timers and lets go of the caller's signal; aborts whatever is still in flight. */
  close(): void {
    clearTimeout(this.timer);
    this.detachCaller();
    if (!this.signal.aborted) this.controller.abort(new Error("the provider call is over"));
  }

  private toError(info: FailureInfo): ProviderError {
    const { secrets, limits } = this.context;
    const redacted: FailureInfo = {
      ...info,
      apiMessage: info.apiMessage === undefined ? undefined : (redactValue(info.apiMessage, secrets) as string),
      body: redactValue(info.body, secrets),
      cause: redactError(info.cause, secrets),
    };
    return redactError(toProviderError(redacted, { maxRetryAfterMs: limits.maxRetryAfterMs }), secrets);
  }

  /** Settles like `work`, or rejects with the abort reason as soon as the signal fires. */
  private race<Value>(work: Promise<Value>): Promise<Value> {
    const signal = this.signal;
    if (signal.aborted) {
      work.catch(() => undefined);
      return Promise.reject(signal.reason as Error);
    }
    return new Promise<Value>((resolve, reject) => {
      const onAbort = () => reject(signal.reason as Error);
      signal.addEventListener("abort", onAbort, { once: true });
      work.then(
        (value) => {
          signal.removeEventListener("abort", onAbort);
          resolve(value);
        },
        (error: unknown) => {
          signal.removeEventListener("abort", onAbort);
          reject(error);
        },
      );
    });
  }
}

function shouldRetry(info: FailureInfo): boolean {
  const header = info.headers?.get("x-should-retry");
  if (header === "true") return true;
  if (header === "false") return false;
  if (info.status === undefined) return info.kind === "connection";
  return info.status === 408 || info.status === 409 || info.status === 429 || info.status >= 500;
}

/** The SDKs' own backoff: 0.5 s doubling per attempt up to 8 s, less up to 25 % jitter. */
function backoffMs(attempt: number): number {
  return Math.min(500 * 2 ** attempt, 8000) * (1 - Math.random() * 0.25);
}

function sleep(milliseconds: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    const timer = setTimeout(done, milliseconds);
    function done() {
      clearTimeout(timer);
      signal.removeEventListener("abort", done);
      resolve();
    }
    signal.addEventListener("abort", done, { once: true });
  });
}
