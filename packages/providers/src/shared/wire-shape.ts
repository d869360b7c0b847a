import { ProviderError } from "@rein/core";
import { describeThrown } from "./to-provider-error";

type JsonObject = Record<string, unknown>;

/**
 * Reads a response body (or one stream event) whose shape the adapter
 * cannot take on trust: an OpenAI-compatible server, a proxy or a broken
 * gateway may send anything with status 200. Each accessor returns the
 * field with its type, or throws a `ProviderError` naming the field, what
 * it was and what was expected (`openai sent a malformed response:
 * choices is missing (expected a non-empty array)`).
 */
export class WireShape {
  constructor(
    private readonly provider: string,
    /** `"response"` or `"stream event"`, for messages. */
    private readonly what: string,
    /** The whole body or event, kept on the error for diagnosis. */
    private readonly body: unknown,
  ) {}

  /** The body itself, which must be an object. */
  root(): JsonObject {
    return this.object(this.body, "the body");
  }

  object(value: unknown, path: string): JsonObject {
    if (typeof value === "object" && value !== null && !Array.isArray(value)) return value as JsonObject;
    throw this.malformed(path, value, "an object");
  }

  array(value: unknown, path: string, options: { nonEmpty?: boolean } = {}): unknown[] {
    if (Array.isArray(value) && (!options.nonEmpty || value.length > 0)) return value;
    throw this.malformed(path, value, options.nonEmpty ? "a non-empty array" : "an array");
  }

  string(value: unknown, path: string): string {
    if (typeof value === "string") return value;
    throw this.malformed(path, value, "a string");
  }

  /** A string, or nothing (`null` and `undefined` read as `undefined`). */
  optionalString(value: unknown, path: string): string | undefined {
    if (value == null) return undefined;
    if (typeof value === "string") return value;
    throw this.malformed(path, value, "a string or null");
  }

  number(value: unknown, path: string): number {
    if (typeof value === "number" && Number.isFinite(value)) return value;
    throw this.malformed(path, value, "a number");
  }

  /** A number, or nothing (`null` and `undefined` read as `undefined`). */
  optionalNumber(value: unknown, path: string): number | undefined {
    if (value == null) return undefined;
    return this.number(value, path);
  }

  /** A count (of tokens): a non-negative integer. A negative one would refund a budget it is charged to. */
  count(value: unknown, path: string): number {
    if (typeof value === "number" && Number.isSafeInteger(value) && value >= 0) return value;
    throw this.malformed(path, value, "a count: a whole number of at least 0");
  }

  /** A count, or nothing (`null` and `undefined` read as `undefined`). */
  optionalCount(value: unknown, path: string): number | undefined {
    if (value == null) return undefined;
    return this.count(value, path);
  }

  /** An object, or nothing (`null` and `undefined` read as `undefined`). */
  optionalObject(value: unknown, path: string): JsonObject | undefined {
    if (value == null) return undefined;
    return this.object(value, path);
  }

  /** The error for a field that is not what the API reference says. */
  malformed(path: string, value: unknown, expected: string): ProviderError {
    return new ProviderError(
      `${this.provider} sent a malformed ${this.what}: ${path} is ${describeFound(value)} (expected ${expected})`,
      { provider: this.provider, body: this.body },
    );
  }
}

function describeFound(value: unknown): string {
  if (value === undefined) return "missing";
  if (value === null) return "null";
  if (Array.isArray(value)) return value.length === 0 ? "an empty array" : "an array";
  if (typeof value === "string") return value.length > 40 ? "a string" : `the string ${JSON.stringify(value)}`;
  return `${typeof value === "object" ? "an" : "a"} ${typeof value}`;
}

/**
 * The error for a stream that ended, cleanly or not, before the event that
 * marks a complete answer: whatever arrived is dropped, never returned as
 * if it were the whole turn.
 */
export function streamEndedEarly(provider: string, endEvent: string, events: number, cause?: unknown): ProviderError {
  const how = cause === undefined ? "the connection closed" : `the connection broke (${describeThrown(cause)})`;
  return new ProviderError(
    `${provider} stream ended early: ${how} after ${events} event${events === 1 ? "" : "s"}, before ${endEvent}, ` +
      `so the answer is incomplete and was dropped — retry the request`,
    { provider, cause },
  );
}

/**
 * Reads a raw HTTP response body the way the SDKs do (JSON when the
 * content type says so, else the text), for calls where the SDK's own
 * post-processing would trip over a malformed body before the adapter
 * could name what is wrong.
 */
export async function readResponseBody(provider: string, response: Response): Promise<unknown> {
  const text = await response.text();
  if (!/json/i.test(response.headers.get("content-type") ?? "")) return text;
  try {
    return JSON.parse(text) as unknown;
  } catch (error) {
    throw new ProviderError(`${provider} sent a malformed response: the body is not valid JSON (${describeThrown(error)})`, {
      provider,
      body: text,
      cause: error,
    });
  }
}
