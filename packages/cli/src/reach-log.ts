import { mkdirSync, openSync } from "node:fs";
import { dirname } from "node:path";
import pino from "pino";
import type { StatusMessage } from "./status-line";

/** @internal The writer of the reach status log (one JSON line per change of the figures). */
export interface ReachLog {
  write(status: StatusMessage): void;
  /** Writes what is buffered; safe to call right before `process.exit`. */
  close(): void;
}

/**
 * Opens the reach status log of a run: JSON lines through pino's
 * asynchronous destination (buffered, written off the run's path), one per
 * change of the reach figures, appended to `path`.
 * @internal
 */
export function openReachLog(path: string, sessionId: string): ReachLog {
  mkdirSync(dirname(path), { recursive: true });
  // An fd opened here makes the destination ready at once, so close() can flush synchronously at any time.
  const destination = pino.destination({ dest: openSync(path, "a"), sync: false, minLength: 4096 });
  const logger = pino({ base: { pid: process.pid, sessionId }, timestamp: pino.stdTimeFunctions.isoTime }, destination);
  let last = "";
  return {
    write(status) {
      const key = JSON.stringify(status.reach ?? null);
      if (key === last) return;
      last = key;
      logger.info({ seq: status.seq, elapsedMs: status.elapsedMs, reach: status.reach ?? null }, "reach-status");
    },
    close() {
      destination.flushSync();
      destination.end();
    },
  };
}
