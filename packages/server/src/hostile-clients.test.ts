import { spawn, type ChildProcess } from "node:child_process";
import { request as httpRequest, type ClientRequest } from "node:http";
import { connect, type Socket } from "node:net";
import { join, resolve } from "node:path";
import { InMemorySessionStore } from "rein";
import { createServer } from "./create-server";
import { serve, type RunningServer } from "./serve";
import { WaitingProvider, waitingEntries } from "./__fixtures__/waiting-provider";
import { entries } from "./__fixtures__/agents";
import { withUnsignedPolicyHeaders } from "./__fixtures__/unsigned-headers";

withUnsignedPolicyHeaders();

const ROOT = resolve(__dirname, "..", "..", "..");

/** Starts a run over a real socket and resolves once the response's first bytes arrived; the caller then hangs up. */
function startRun(url: string, body: unknown, headers: Record<string, string> = {}): { request: ClientRequest; firstBytes: Promise<string> } {
  const { hostname, port } = new URL(url);
  const request = httpRequest({ hostname, port, path: "/v1/agent/run", method: "POST", headers: { "content-type": "application/json", ...headers } });
  const firstBytes = new Promise<string>((resolveBytes, reject) => {
    request.on("response", (response) => response.once("data", (chunk: Buffer) => resolveBytes(chunk.toString())));
    request.on("error", reject);
  });
  request.end(JSON.stringify(body));
  return { request, firstBytes };
}

/** A raw TCP connection: what it received, and a promise of its close. */
function rawSocket(url: string): { socket: Socket; received: () => string; closed: Promise<void> } {
  const { hostname, port } = new URL(url);
  const socket = connect(Number(port), hostname);
  let text = "";
  socket.on("data", (chunk: Buffer) => (text += chunk.toString("latin1")));
  socket.on("error", () => undefined);
  const closed = new Promise<void>((done) => socket.once("close", () => done()));
  return { socket, received: () => text, closed };
}

async function healthz(url: string): Promise<{ status: number; body: { status: string; runs: number } }> {
  const response = await fetch(`${url}/healthz`);
  return { status: response.status, body: (await response.json()) as { status: string; runs: number } };
}

async function untilNoRuns(url: string): Promise<void> {
  while ((await healthz(url)).body.runs > 0) await new Promise((r) => setTimeout(r, 10));
}

function startChild(): { child: ChildProcess; url: Promise<string>; stdout: () => string; exited: Promise<number | null> } {
  const child = spawn(process.execPath, ["--require", require.resolve("tsx/cjs"), join(__dirname, "__fixtures__", "socket-server.ts")], {
    cwd: ROOT,
    env: { ...process.env, TSX_TSCONFIG_PATH: join(ROOT, "tsconfig.test.json") },
    stdio: ["ignore", "pipe", "inherit"],
  });
  let stdout = "";
  let listening: (url: string) => void = () => undefined;
  const url = new Promise<string>((found) => (listening = found));
  child.stdout!.on("data", (chunk: Buffer) => {
    stdout += chunk.toString();
    const match = /listening (\S+)/.exec(stdout);
    if (match) listening(match[1]!);
  });
  const exited = new Promise<number | null>((done) => child.once("exit", (code) => done(code)));
  return { child, url, stdout: () => stdout, exited };
}

describe("a client that hangs up", () => {
  it("mid-SSE, against a server in its own process: the process lives on, the run's model request is aborted, /healthz answers", async () => {
    const server = startChild();
    try {
      const url = await server.url;
      for (let round = 0; round < 3; round++) {
        const { request, firstBytes } = startRun(url, { entry: "wait", task: "hang up on me" }, { accept: "text/event-stream" });
        expect(await firstBytes).toMatch(/^(data: |: heartbeat)/);
        request.destroy();
        while (server.stdout().split("aborted\n").length - 1 <= round) await new Promise((r) => setTimeout(r, 10));
        await untilNoRuns(url);
      }
      // A run that ends by itself after its client left (the old crash: closing the cancelled stream threw).
      const { request, firstBytes } = startRun(url, { entry: "nap", args: [200] }, { accept: "text/event-stream" });
      await firstBytes;
      request.destroy();
      await untilNoRuns(url);
      await new Promise((r) => setTimeout(r, 300));
      expect(server.child.exitCode).toBeNull();
      expect(await healthz(url)).toEqual({ status: 200, body: { status: "ok", runs: 0 } });
    } finally {
      server.child.kill("SIGTERM");
      await server.exited;
    }
  }, 30_000);

  describe("in this process", () => {
    let provider: WaitingProvider;
    let server: RunningServer;
    beforeAll(async () => {
      server = await serve({ app: createServer({ entries: waitingEntries(() => provider), mintRootBudget: true, heartbeatMs: 20 }) });
    });
    afterAll(() => server.close());
    beforeEach(() => (provider = new WaitingProvider()));

    it("SSE: hanging up cancels the run — the provider's signal aborts with a CancelledError", async () => {
      const { request, firstBytes } = startRun(server.url, { entry: "wait", task: "x" }, { accept: "text/event-stream" });
      await firstBytes;
      await provider.started;
      request.destroy();
      expect(await provider.aborted).toMatchObject({ name: "CancelledError", message: "the client disconnected" });
      await untilNoRuns(server.url);
      expect((await healthz(server.url)).body).toEqual({ status: "ok", runs: 0 });
    });

    it("JSON: hanging up before the answer cancels the run — the provider's signal aborts", async () => {
      const { hostname, port } = new URL(server.url);
      const request = httpRequest({ hostname, port, path: "/v1/agent/run", method: "POST", headers: { "content-type": "application/json" } });
      request.on("error", () => undefined);
      request.end(JSON.stringify({ entry: "wait", task: "x" }));
      await provider.started;
      request.destroy();
      expect(await provider.aborted).toMatchObject({ name: "CancelledError" });
      await untilNoRuns(server.url);
      expect((await healthz(server.url)).status).toBe(200);
    });
  });
});

describe("request size and time limits over a real socket", () => {
  it("a chunked body over maxBodyBytes gets its 413 while the client is still sending (never buffered whole first), and the connection closes", async () => {
    const server = await serve({ app: createServer({ entries, maxBodyBytes: 64 * 1024 }) });
    try {
      const { socket, received, closed } = rawSocket(server.url);
      socket.write("POST /v1/agent/run HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n");
      const chunk = "x".repeat(16 * 1024);
      // Four times the limit, and never the terminating chunk: a server that waited for the whole body would never answer.
      for (let i = 0; i < 16; i++) socket.write(`${chunk.length.toString(16)}\r\n${chunk}\r\n`);
      await closed;
      expect(received()).toMatch(/^HTTP\/1\.1 413 /);
      expect(received()).toContain('"type":"body_too_large"');
      expect((await healthz(server.url)).status).toBe(200);
    } finally {
      await server.close();
    }
  });

  it("a Content-Length over maxBodyBytes is refused before any body is read", async () => {
    const server = await serve({ app: createServer({ entries, maxBodyBytes: 1024 }) });
    try {
      const { socket, received, closed } = rawSocket(server.url);
      socket.write("POST /v1/agent/run HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 400000000\r\n\r\n{");
      await closed;
      expect(received()).toMatch(/^HTTP\/1\.1 413 /);
    } finally {
      await server.close();
    }
  });

  it("headers that never finish: 408 and the connection is closed (headersTimeoutMs)", async () => {
    const server = await serve({ app: createServer({ entries }), headersTimeoutMs: 100 });
    try {
      const { socket, received, closed } = rawSocket(server.url);
      socket.write("POST /v1/agent/run HTTP/1.1\r\nHost: x\r\n");
      await closed;
      expect(received()).toMatch(/^HTTP\/1\.1 408 /);
      const silent = rawSocket(server.url);
      await silent.closed;
    } finally {
      await server.close();
    }
  });

  it("a body that stops arriving: 408 and the connection is closed (bodyTimeoutMs)", async () => {
    const server = await serve({ app: createServer({ entries }), headersTimeoutMs: 100, bodyTimeoutMs: 100 });
    try {
      const { socket, closed } = rawSocket(server.url);
      socket.write("POST /v1/agent/run HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{\"entry\":");
      await closed;
      expect((await healthz(server.url)).status).toBe(200);
    } finally {
      await server.close();
    }
  });

  it("an idle kept-alive connection is closed (idleTimeoutMs)", async () => {
    const server = await serve({ app: createServer({ entries }), idleTimeoutMs: 100 });
    try {
      const { socket, received, closed } = rawSocket(server.url);
      socket.write("GET /healthz HTTP/1.1\r\nHost: x\r\nConnection: keep-alive\r\n\r\n");
      await closed;
      expect(received()).toMatch(/^HTTP\/1\.1 200 /);
      expect(received()).toMatch(/keep-alive/i);
    } finally {
      await server.close();
    }
  });

  it("a connection over maxConnections is closed at once; the others are served", async () => {
    const server = await serve({ app: createServer({ entries }), maxConnections: 2 });
    try {
      const held = [rawSocket(server.url), rawSocket(server.url)];
      for (const { socket } of held) await new Promise<void>((ready) => socket.once("connect", () => ready()));
      // Both accepted: each answers a request on its own connection.
      for (const { socket, received } of held) {
        socket.write("GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n");
        while (!received().includes("\r\n\r\n")) await new Promise((r) => setTimeout(r, 5));
        expect(received()).toMatch(/^HTTP\/1\.1 200 /);
      }
      const third = rawSocket(server.url);
      third.socket.write("GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n");
      await third.closed;
      expect(third.received()).toBe("");
      held[0]!.socket.destroy();
      await held[0]!.closed;
      // A slot is free again (the server sees the close a moment later).
      let answered: number | undefined;
      while (answered === undefined) answered = await fetch(`${server.url}/healthz`, { headers: { connection: "close" } }).then((r) => r.status, () => undefined);
      expect(answered).toBe(200);
      held[1]!.socket.destroy();
    } finally {
      await server.close();
    }
  });

  it("serve() refuses a limit that is not a positive integer", async () => {
    await expect(serve({ entries, maxConnections: 0 })).rejects.toThrow(/maxConnections must be a positive integer/);
    await expect(serve({ entries, headersTimeoutMs: 1.5 })).rejects.toThrow(/headersTimeoutMs must be a positive integer/);
  });
});

describe("bounded answers and store faults", () => {
  it("an unknown entry's 404 names at most 64 characters of it and says how long it was", async () => {
    const app = createServer({ entries, mintRootBudget: true });
    const name = "e".repeat(900_000);
    const response = await app.request("/v1/agent/run", { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ entry: name }) });
    expect(response.status).toBe(404);
    const text = await response.text();
    expect(text.length).toBeLessThan(1_000);
    expect(text).toContain("(900000 characters)");
    const longPath = await app.request(`/${"p".repeat(10_000)}`);
    expect((await longPath.text()).length).toBeLessThan(1_000);
  });

  it("a store fault is a 503 store_unavailable that names nothing of the store; the fault goes to onInternalError", async () => {
    const store = new InMemorySessionStore();
    const reported: unknown[] = [];
    const app = createServer({ entries, store, mintRootBudget: true, onInternalError: (error) => reported.push(error) });
    await app.request("/v1/agent/run", { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ entry: "research", task: "x", sessionId: "s1" }) });
    store.close();
    for (const path of ["/v1/sessions/s1", "/v1/sessions/s1/graph"]) {
      const response = await app.request(path);
      expect(response.status).toBe(503);
      expect(await response.json()).toEqual({ error: { type: "store_unavailable", message: "the session store is unavailable; retry later" } });
    }
    const run = await app.request("/v1/agent/run", { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ entry: "research", task: "x", sessionId: "s1" }) });
    expect(run.status).toBe(503);
    expect(await run.json()).toMatchObject({ status: "error", error: { type: "store_unavailable", message: "the session store is unavailable; retry later" } });
    expect(reported.length).toBeGreaterThanOrEqual(3);
  });
});
