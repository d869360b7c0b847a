/**
 * The session store file `rein` reads and writes when `--store` is not
 * given, relative to the working directory (the `SessionStore` default).
 * @example
 * ```ts
 * new SessionStore({ path: join(process.cwd(), DEFAULT_STORE_PATH) });
 * ```
 */
export const DEFAULT_STORE_PATH = ".rein/sessions.db";

/** The reach status log `rein run --verbose` writes (JSON lines), relative to the working directory. */
export const DEFAULT_REACH_LOG_PATH = ".rein/reach.log";
