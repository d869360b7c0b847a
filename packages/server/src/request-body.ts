import { RequestError, bounded } from "./http-error";

/** @internal A run request's body, checked. */
export interface RunBody {
  readonly entry: string;
  readonly args: unknown[];
  readonly sessionId: string | undefined;
}

/** @internal The session ids a client may name (before the server scopes them to its key). */
export const SESSION_ID = /^[A-Za-z0-9._:-]{1,128}$/;

/**
 * @internal Reads a request body as UTF-8 text, counting bytes as they
 * arrive: a declared `Content-Length` over `limit` is refused before a byte is
 * read, and a body without one (chunked) is refused as soon as it passes
 * `limit` — it is never buffered whole first. The rest of a refused body is
 * not read; the 413 closes the connection (see `fail` in create-server).
 */
export async function readBodyText(request: Request, contentLength: string | undefined, limit: number): Promise<string> {
  const tooLarge = () => new RequestError("body_too_large", `body is larger than ${limit} bytes`);
  if (contentLength !== undefined && Number(contentLength) > limit) throw tooLarge();
  const body = request.body;
  if (body === null) return "";
  const reader = body.getReader();
  const chunks: Uint8Array[] = [];
  let size = 0;
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      size += value.byteLength;
      if (size > limit) throw tooLarge();
      chunks.push(value);
    }
  } catch (error) {
    if (error instanceof RequestError) throw error;
    throw new RequestError("invalid_body", "the body could not be read (the client stopped sending it)");
  } finally {
    // Not cancel(): cancelling destroys the socket before the 413 is written.
    reader.releaseLock();
  }
  try {
    return new TextDecoder("utf-8", { fatal: true }).decode(Buffer.concat(chunks));
  } catch {
    throw new RequestError("invalid_body", "body must be UTF-8 JSON");
  }
}

/** @internal Reads a JSON object body (UTF-8, at most `limit` bytes); an empty body reads as `{}` when `emptyIs` is given. */
export async function readJsonObject(request: Request, contentLength: string | undefined, limit: number, shape: string, emptyIs?: object): Promise<Record<string, unknown>> {
  const text = await readBodyText(request, contentLength, limit);
  if (emptyIs !== undefined && text.trim() === "") return { ...emptyIs };
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    throw new RequestError("invalid_body", `body must be JSON: ${shape}`);
  }
  if (typeof parsed !== "object" || parsed === null || Array.isArray(parsed)) throw new RequestError("invalid_body", `body must be a JSON object: ${shape}`);
  return parsed as Record<string, unknown>;
}

/** @internal Reads and checks the body of `POST /v1/agent/run`. */
export async function readRunBody(request: Request, contentLength: string | undefined, limit: number): Promise<RunBody> {
  const body = await readJsonObject(request, contentLength, limit, "{ entry, args? | task?, sessionId? }");
  for (const key of Object.keys(body)) {
    if (key !== "entry" && key !== "args" && key !== "task" && key !== "sessionId") throw new RequestError("invalid_body", `body.${bounded(key, 50)} is not a known field (entry, args, task, sessionId)`);
  }
  if (typeof body["entry"] !== "string" || body["entry"] === "") throw new RequestError("invalid_body", "body.entry must be a non-empty string naming a listed entry");
  if (body["args"] !== undefined && body["task"] !== undefined) throw new RequestError("invalid_body", "body.args and body.task are exclusive: pass one");
  if (body["args"] !== undefined && !Array.isArray(body["args"])) throw new RequestError("invalid_body", "body.args must be an array of the method's arguments");
  const sessionId = body["sessionId"];
  if (sessionId !== undefined && (typeof sessionId !== "string" || !SESSION_ID.test(sessionId))) {
    throw new RequestError("invalid_body", "body.sessionId must be 1-128 characters of A-Z a-z 0-9 . _ : -");
  }
  const args = Array.isArray(body["args"]) ? (body["args"] as unknown[]) : body["task"] !== undefined ? [body["task"]] : [];
  return { entry: body["entry"], args, sessionId: sessionId as string | undefined };
}
