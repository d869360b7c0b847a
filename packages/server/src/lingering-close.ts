import type { Server } from "node:net";
import type { Socket } from "node:net";

/** How long a connection the server closes keeps reading, and dropping, what the client still sends. */
export const LINGER_MS = 2_000;

/**
 * @internal Closes the server's connections as an HTTP server should when
 * the client may still be sending (RFC 9112, section 9.6, "tear-down"):
 * after the answer, the server's side is shut (FIN), but the socket keeps
 * reading and dropping what arrives until the client closes its side or
 * {@link LINGER_MS} pass. A socket closed at once makes the kernel answer the
 * client's next bytes with a reset, and a client still writing a body the
 * server refused (a 413 for an oversize chunked body) loses the answer
 * already written to it.
 *
 * Node's HTTP server closes a connection it answered with `connection:
 * close` through `socket.destroySoon()`; this replaces that call on each
 * accepted socket.
 */
export function lingerOnClose(server: Server): void {
  server.on("connection", (socket: Socket) => {
    (socket as Socket & { destroySoon(): void }).destroySoon = () => linger(socket);
  });
}

/** Connections the server has closed its side of, draining now. (Node serves no request pipelined after an answer that closed its connection: `lingering-close.test.ts`.) */
const lingering = new WeakSet<Socket>();

function linger(socket: Socket): void {
  if (socket.destroyed) return;
  // Asked a second time (the HTTP adapter cutting off a client that floods a refused body): closed now.
  if (lingering.has(socket)) {
    socket.destroy();
    return;
  }
  lingering.add(socket);
  const done = () => {
    clearTimeout(timer);
    socket.destroy();
  };
  const timer = setTimeout(done, LINGER_MS);
  timer.unref();
  socket.once("end", done);
  socket.once("error", done);
  socket.once("close", () => clearTimeout(timer));
  socket.end();
}
