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
}

/** A request the server received. */
export interface RecordedRequest {
  method: string;
  path: string;
  headers: IncomingHttpHeaders;
  // Tests read arbitrary wire fields of the parsed body.
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  body: any;
}

/**
 * A local HTTP server on 127.0.0.1 that answers each request with the next
 * queued reply and records what it received, so tests can drive the real SDK
 * clients and assert on the exact wire bodies.
 */
export class FixtureServer {
  readonly requests: RecordedRequest[] = [];
  private readonly replies: FixtureReply[] = [];

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
        fixtureServer!.requests.push({
          method: request.method ?? "",
          path: request.url ?? "",
          headers: request.headers,
          body: text === "" ? undefined : JSON.parse(text),
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
  const status = reply.status ?? 200;
  if (reply.sse !== undefined) {
    response.writeHead(status, { "content-type": "text/event-stream", "cache-control": "no-cache", ...reply.headers });
    // Seven-byte chunks split JSON payloads and event boundaries alike.
    for (let offset = 0; offset < reply.sse.length; offset += 7) {
      response.write(reply.sse.slice(offset, offset + 7));
      await new Promise((resolve) => setImmediate(resolve));
    }
    response.end();
    return;
  }
  response.writeHead(status, { "content-type": "application/json", ...reply.headers });
  response.end(JSON.stringify(reply.json ?? {}));
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
