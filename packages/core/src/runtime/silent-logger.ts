import type { Logger } from "pino";

const drop = (): void => undefined;

/**
 * The default logger of a Runtime when `REIN_LOG_LEVEL` is unset: it drops
 * everything and, unlike `pino({ level: "silent" })`, does not need pino
 * loaded (~14 ms of every import of `rein`). pino loads when a level is set.
 * Setting its `level` later does not turn logging on: set REIN_LOG_LEVEL,
 * or pass `logger` to the Runtime.
 * @internal
 */
export const SILENT_LOGGER: Logger = {
  level: "silent",
  fatal: drop,
  error: drop,
  warn: drop,
  info: drop,
  debug: drop,
  trace: drop,
  silent: drop,
  isLevelEnabled: () => false,
  flush: drop,
  bindings: () => ({}),
  setBindings: drop,
  child(): Logger {
    return SILENT_LOGGER;
  },
} as unknown as Logger;

/** A pino logger at `REIN_LOG_LEVEL`, or {@link SILENT_LOGGER} when it is unset or `silent`. @internal */
export function defaultLogger(): Logger {
  const level = process.env["REIN_LOG_LEVEL"];
  if (level === undefined || level === "" || level === "silent") return SILENT_LOGGER;
  return (require("pino") as typeof import("pino")).pino({ level });
}
