import { mkdirSync, openSync } from "node:fs";
import { dirname } from "node:path";
import type { ReachFigures, StatusMessage } from "./status-line";

/**
 * What counts as a change of the reach figures: depth, zone, tokens, cost,
 * and memory to the whole MB. The elapsed time (always moving) and memory's
 * fractions are not changes.
 * @internal
 */
export function reachChangeKey(reach: ReachFigures | undefined): string {
  if (reach === undefined) return "none";
  const { depth, zone, tokens, costUsd, memoryMb } = reach;
  return JSON.stringify({ depth, zone, tokens, costUsd, memoryMb: { used: Math.round(memoryMb.used), limit: memoryMb.limit } });
}

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
  // Loaded here, not at the top: only `--verbose` writes the log, and pino costs every run's child about 40 ms of CPU to load.
  const pino = require("pino") as typeof import("pino");
  // An fd opened here makes the destination ready at once, so close() can flush synchronously at any time.
  const destination = pino.destination({ dest: openSync(path, "a"), sync: false, minLength: 4096 });
  const logger = pino({ base: { pid: process.pid, sessionId }, timestamp: pino.stdTimeFunctions.isoTime }, destination);
  let last = "";
  return {
    write(status) {
      const key = reachChangeKey(status.reach);
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
