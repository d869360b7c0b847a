/**
 * A connection the server closes after its answer keeps reading until the
 * client has the answer (lingering close, `lingering-close.ts`): a client
 * still writing a body the server refused gets its 413, not a reset that
 * throws the answer away.
 */
import { connect } from "node:net";
import { encodePolicyHeader, InMemorySessionStore } from "rein";
import { serve, type RunningServer } from "./serve";
import { entries } from "./__fixtures__/agents";
import { withUnsignedPolicyHeaders } from "./__fixtures__/unsigned-headers";

withUnsignedPolicyHeaders();

/**
 * Writes the head of a chunked run request and `megabytes` of body at once,
 * without reading, then waits `pauseMs` (the server has answered and closed
 * by then, while the rest of the body was still arriving) before it reads:
 * what it read, and whether the connection was reset.
 */
function oversizeThenRead(url: string, megabytes: number, pauseMs: number): Promise<{ text: string; reset: boolean }> {
  const { hostname, port } = new URL(url);
  return new Promise((resolve) => {
    const socket = connect(Number(port), hostname);
    let text = "";
    let reset = false;
    socket.pause();
    socket.on("error", (error: NodeJS.ErrnoException) => (reset = error.code === "ECONNRESET" || error.code === "EPIPE" || reset));
    socket.on("close", () => resolve({ text, reset }));
    socket.on("connect", () => {
      socket.write(`POST /v1/agent/run HTTP/1.1\r\nhost: ${hostname}\r\ncontent-type: application/json\r\ntransfer-encoding: chunked\r\n\r\n`);
      const chunk = Buffer.alloc(64 * 1024, 0x20);
      const head = Buffer.from(`${chunk.length.toString(16)}\r\n`);
      for (let i = 0; i < megabytes * 16; i++) socket.write(Buffer.concat([head, chunk, Buffer.from("\r\n")]));
      setTimeout(() => {
        socket.on("data", (data: Buffer) => (text += data.toString("latin1")));
        socket.resume();
        // The answer is read: the client stops sending and closes its side too.
        setTimeout(() => socket.destroy(), 1_000);
      }, pauseMs);
    });
  });
}

describe("lingering close", () => {
  let server: RunningServer;
  const store = new InMemorySessionStore();
  beforeAll(async () => {
    server = await serve({ entries, store, port: 0, maxBodyBytes: 16 * 1024, resumeInterrupted: false, warn: () => undefined });
  });
  afterAll(() => server.close());

  it("a client that wrote 8 MB of an oversize chunked body before reading still reads its 413 (ten times in a row)", async () => {
    for (let attempt = 0; attempt < 10; attempt++) {
      const { text } = await oversizeThenRead(server.url, 8, 300);
      expect(text).toMatch(/^HTTP\/1\.1 413 /);
      expect(text).toContain('"type":"body_too_large"');
    }
  }, 60_000);

  it("the server answers the next request after a refused body", async () => {
    await oversizeThenRead(server.url, 1, 50);
    expect((await fetch(`${server.url}/healthz`)).status).toBe(200);
  });

  it("a request pipelined after an answer that closed the connection is not served: its run never starts", async () => {
    const { hostname, port } = new URL(server.url);
    const body = JSON.stringify({ entry: "add", args: [2, 3], sessionId: "pipelined" });
    const text = await new Promise<string>((resolve) => {
      const socket = connect(Number(port), hostname);
      let received = "";
      socket.on("data", (data: Buffer) => (received += data.toString("latin1")));
      socket.on("error", () => undefined);
      socket.on("close", () => resolve(received));
      socket.on("connect", () => {
        socket.write(
          `GET /healthz HTTP/1.1\r\nhost: ${hostname}\r\nconnection: close\r\n\r\n` +
            `POST /v1/agent/run HTTP/1.1\r\nhost: ${hostname}\r\ncontent-type: application/json\r\nx-agent-policy: ${encodePolicyHeader({ depth: 3 })}\r\ncontent-length: ${Buffer.byteLength(body)}\r\n\r\n${body}`,
        );
        setTimeout(() => socket.end(), 500);
      });
    });
    expect(text).toMatch(/^HTTP\/1\.1 200 /);
    expect(text.match(/HTTP\/1\.1 /g)).toHaveLength(1);
    expect(store.hasSession("pipelined")).toBe(false);
  });
});
