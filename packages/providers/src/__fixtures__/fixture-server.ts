import { readFileSync } from "node:fs";
import { createServer, type IncomingHttpHeaders, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { join } from "node:path";

/** One canned HTTP answer: a JSON body or a server-sent-event stream read from a fixture. */
export interface FixtureReply {
  status?: number;
  headers?: Record<string, string>;
  /** JSON body. */
  json?: unknown;
  /** Raw SSE text, sent in small chunks so events straddle chunk boundaries. */
  sse?: string;
  /** A raw body, sent as it is (with `content-type` from `headers`, else text/plain). */
  text?: string;
  /**
   * Send the headers and this many bytes of the body, then nothing more,
   * keeping the connection open (a stalled server): 0 stalls right after the
   * headers.
   */
  stallAfterBytes?: number;
  /**
   * Send this many bytes of the body, then end the response cleanly (a
   * graceful close mid-answer), or with `abrupt`, destroy the socket.
   */
  cutAfterBytes?: number;
  abrupt?: boolean;
  /** Never answer, not even with headers: a provider still working on it (only the client can end the request). */
  silent?: boolean;
}

/** A request the server received. */
export interface RecordedRequest {
  method: string;
  path: string;
  headers: IncomingHttpHeaders;
  // Tests read arbitrary wire fields of the parsed body.
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  body: any;
  /** The body exactly as it came over the wire. */
  rawBody: string;
  /** Resolves when the client's connection closes (an aborted request closes it; keep-alive ones stay open). */
  closed: Promise<void>;
}

/**
 * A local HTTP server on 127.0.0.1 that answers each request with the next
 * queued reply and records what it received, so tests can drive the real SDK
 * clients and assert on the exact wire bodies.
 */
export class FixtureServer {
  readonly requests: RecordedRequest[] = [];
  private readonly replies: FixtureReply[] = [];
  /** Resolves when each connection ever accepted closes, one per connection, in the order they came. */
  private readonly connectionClosings: Promise<void>[] = [];

  private constructor(
    private readonly server: Server,
    readonly url: string,
  ) {}

  static async start(): Promise<FixtureServer> {
    let fixtureServer: FixtureServer | undefined;
    const server = createServer((request, response) => {
      const chunks: Buffer[] = [];
      request.on("data", (chunk: Buffer) => chunks.push(chunk));
      request.on("end", () => {
        const text = Buffer.concat(chunks).toString("utf8");
        const socket = request.socket;
        fixtureServer!.requests.push({
          method: request.method ?? "",
          path: request.url ?? "",
          headers: request.headers,
          body: text === "" ? undefined : JSON.parse(text),
          rawBody: text,
          closed: socket.destroyed ? Promise.resolve() : new Promise((resolve) => socket.once("close", () => resolve())),
        });
        const reply = fixtureServer!.replies.shift();
        if (reply === undefined) {
          response.writeHead(500, { "content-type": "application/json" });
          response.end(JSON.stringify({ error: { message: "fixture server: no reply queued" } }));
          return;
        }
        void send(reply, response);
      });
    });
    server.on("connection", (socket) => {
      fixtureServer!.connectionClosings.push(new Promise((resolve) => socket.once("close", () => resolve())));
    });
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    const { port } = server.address() as AddressInfo;
    fixtureServer = new FixtureServer(server, `http://127.0.0.1:${port}`);
    return fixtureServer;
  }

  /** Queues replies, answered in order, one per request. */
  reply(...replies: FixtureReply[]): this {
    this.replies.push(...replies);
    return this;
  }

  /** How many connections clients opened to this server so far. */
  get connections(): number {
    return this.connectionClosings.length;
  }

  /**
   * Resolves once every connection opened so far has closed (an aborted
   * request closes its own; a keep-alive one stays open). Unlike a
   * request's `closed`, it covers a request aborted before its body arrived.
   */
  async allConnectionsClosed(): Promise<void> {
    await Promise.all(this.connectionClosings);
  }

  /** Replies still queued (a test that expects every reply used checks this is 0). */
  get pending(): number {
    return this.replies.length;
  }

  async close(): Promise<void> {
    this.server.closeAllConnections();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }
}

async function send(reply: FixtureReply, response: import("node:http").ServerResponse): Promise<void> {
  if (reply.silent === true) return;
  const status = reply.status ?? 200;
  let body: string;
  let headers: Record<string, string>;
  if (reply.sse !== undefined) {
    body = reply.sse;
    headers = { "content-type": "text/event-stream", "cache-control": "no-cache" };
  } else if (reply.text !== undefined) {
    body = reply.text;
    headers = { "content-type": "text/plain" };
  } else {
    body = JSON.stringify(reply.json ?? {});
    headers = { "content-type": "application/json" };
  }
  response.writeHead(status, { ...headers, ...reply.headers });
  const bytes = Buffer.from(body, "utf8");
  const limit = Math.min(reply.stallAfterBytes ?? reply.cutAfterBytes ?? bytes.length, bytes.length);
  // Seven-byte chunks split JSON payloads and SSE event boundaries alike.
  const chunkSize = reply.sse !== undefined ? 7 : bytes.length;
  for (let offset = 0; offset < limit; offset += chunkSize) {
    if (response.destroyed) return;
    response.write(bytes.subarray(offset, Math.min(offset + chunkSize, limit)));
    await new Promise((resolve) => setImmediate(resolve));
  }
  if (reply.stallAfterBytes !== undefined) {
    // Headers must reach the client even when no byte of the body does.
    response.flushHeaders();
    return;
  }
  if (reply.cutAfterBytes !== undefined && reply.abrupt) {
    response.socket?.destroy();
    return;
  }
  response.end();
}

/** Reads a fixture file from the `__fixtures__` folder beside an adapter. */
export function readFixture(directory: string, name: string): string {
  return readFileSync(join(directory, "__fixtures__", name), "utf8");
}

/** Reads and parses a JSON fixture. */
export function jsonFixture(directory: string, name: string): unknown {
  return JSON.parse(readFixture(directory, name)) as unknown;
}

/** Every event of a stream, in order. */
export async function collectStream<Event>(events: AsyncIterable<Event>): Promise<Event[]> {
  const all: Event[] = [];
  for await (const event of events) all.push(event);
  return all;
}

/** The error a promise rejects with; fails the test when it resolves. */
export async function failureOf(promise: Promise<unknown>): Promise<unknown> {
  return promise.then(
    () => {
      throw new Error("expected the call to fail");
    },
    (error: unknown) => error,
  );
}

/**
 * Starts a fresh {@link FixtureServer} before each test of the calling file and
 * closes it after; returns a getter for the current one.
 */
export function useFixtureServer(): () => FixtureServer {
  let server: FixtureServer | undefined;
  beforeEach(async () => {
    server = await FixtureServer.start();
  });
  afterEach(async () => {
    await server?.close();
  });
  return () => server!;
}
