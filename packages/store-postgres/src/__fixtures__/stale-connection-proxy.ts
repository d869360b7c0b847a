import { Worker } from "node:worker_threads";

/** A TCP proxy to a PostgreSQL server whose open connections can be made stale at once. */
export interface StaleConnectionProxy {
  /** The port to connect to instead of the server's. */
  readonly port: number;
  /**
   * Ends the server side of every connection open now, without telling the client: its next write is answered
   * with a reset (ECONNRESET), as after a server restart or a proxy's idle cut. Resolves with how many there were.
   */
  staleAll(): Promise<number>;
  close(): Promise<void>;
}

/**
 * The proxy, in a thread of its own: a synchronous store call blocks the test's thread until its worker answers,
 * so a proxy served from the test's event loop would never pass the call on.
 */
const PROXY_THREAD = `
const { createServer, connect } = require("node:net");
const { parentPort, workerData } = require("node:worker_threads");
const open = new Set();
const proxy = createServer((client) => {
  const pair = { client, upstream: connect(workerData.port, "127.0.0.1"), stale: false };
  open.add(pair);
  const { upstream } = pair;
  client.on("data", (chunk) => (pair.stale ? client.resetAndDestroy() : upstream.write(chunk)));
  upstream.on("data", (chunk) => { if (!pair.stale) client.write(chunk); });
  // A live pair ends together; a stale one's client side stays open until it writes.
  upstream.on("close", () => { if (!pair.stale) client.destroy(); });
  client.on("close", () => { open.delete(pair); upstream.destroy(); });
  client.on("error", () => undefined);
  upstream.on("error", () => undefined);
});
proxy.listen(0, "127.0.0.1", () => parentPort.postMessage({ port: proxy.address().port }));
parentPort.on("message", (message) => {
  if (message === "stale") {
    let count = 0;
    for (const pair of open) if (!pair.stale) { pair.stale = true; pair.upstream.destroy(); count++; }
    parentPort.postMessage({ staled: count });
  } else if (message === "close") {
    for (const pair of open) pair.client.destroy();
    proxy.close(() => process.exit(0));
  }
});
`;

/** Starts a {@link StaleConnectionProxy} on 127.0.0.1 in front of `port`. */
export async function startStaleConnectionProxy(port: number): Promise<StaleConnectionProxy> {
  const thread = new Worker(PROXY_THREAD, { eval: true, workerData: { port } });
  const next = <T>(): Promise<T> => new Promise((answered, failed) => {
    thread.once("message", answered);
    thread.once("error", failed);
  });
  const { port: proxyPort } = await next<{ port: number }>();
  return {
    port: proxyPort,
    async staleAll() {
      const answer = next<{ staled: number }>();
      thread.postMessage("stale");
      return (await answer).staled;
    },
    async close() {
      const exited = new Promise((done) => thread.once("exit", done));
      thread.postMessage("close");
      await exited;
    },
  };
}
