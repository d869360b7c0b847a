import { readFileSync, renameSync, writeFileSync } from "node:fs";
import { createConnection, createServer, type Server } from "node:net";
import { join } from "node:path";
import type { StatusMessage } from "./status-line";

/** The files of one run's status directory. */
export function statusPaths(directory: string): { socket: string; file: string; result: string } {
  return { socket: join(directory, "status.sock"), file: join(directory, "status.json"), result: join(directory, "result.json") };
}

/**
 * The child's side: answers every connection on the Unix socket with the
 * latest status (one JSON line) and mirrors it to the status file, the
 * second channel the parent reads when the socket does not answer.
 * @internal
 */
export class StatusPublisher {
  private latest: StatusMessage = { seq: 0, elapsedMs: 0 };
  private readonly server: Server;

  constructor(private readonly paths: { socket: string; file: string }) {
    this.server = createServer((socket) => {
      // The parent gives up on a slow answer and closes its end: that must never crash the run.
      socket.on("error", () => undefined);
      socket.end(`${JSON.stringify(this.latest)}\n`);
    });
    this.server.on("error", () => undefined);
    this.server.listen(paths.socket);
    this.server.unref();
  }

  publish(status: StatusMessage): void {
    this.latest = status;
    try {
      writeFileSync(`${this.paths.file}.tmp`, JSON.stringify(status));
      renameSync(`${this.paths.file}.tmp`, this.paths.file);
    } catch {
      /* the socket still answers */
    }
  }

  close(): void {
    this.server.close();
  }
}

/**
 * The parent's side: asks the socket for the latest status, falling back to
 * the status file; resolves to undefined when neither answers.
 * @internal
 */
export function pollStatus(paths: { socket: string; file: string }, timeoutMs = 90): Promise<StatusMessage | undefined> {
  const fromFile = (): StatusMessage | undefined => {
    try {
      return JSON.parse(readFileSync(paths.file, "utf8")) as StatusMessage;
    } catch {
      return undefined;
    }
  };
  return new Promise((resolve) => {
    let text = "";
    let settled = false;
    const finish = (status: StatusMessage | undefined): void => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      socket.destroy();
      resolve(status);
    };
    const socket = createConnection(paths.socket);
    // A child whose event loop is blocked accepts the connection (the kernel does) but never answers.
    const timer = setTimeout(() => finish(fromFile()), timeoutMs);
    socket.setEncoding("utf8");
    socket.on("data", (chunk: string) => (text += chunk));
    socket.on("end", () => {
      try {
        finish(JSON.parse(text) as StatusMessage);
      } catch {
        finish(fromFile());
      }
    });
    socket.on("error", () => finish(fromFile()));
  });
}
