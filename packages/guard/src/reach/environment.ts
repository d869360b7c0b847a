import { readFileSync } from "node:fs";

let zone: string | undefined;

/**
 * The trust zone this process runs in: `REIN_ZONE` when set, else
 * `docker-network` when `/proc/1/cgroup` names docker, kubepods or
 * containerd, else `local`. Read once per process.
 * @example
 * ```ts
 * detectZone(); // "local"
 * ```
 */
export function detectZone(): string {
  const named = process.env["REIN_ZONE"];
  if (named !== undefined && named.trim() !== "") return named.trim();
  if (zone === undefined) {
    let cgroup = "";
    try {
      cgroup = readFileSync("/proc/1/cgroup", "utf8");
    } catch {
      /* not Linux, or not readable: local */
    }
    zone = /docker|kubepods|containerd/.test(cgroup) ? "docker-network" : "local";
  }
  return zone;
}

/** How long a memory sample is reused: entries within this window read no file. */
export const MEMORY_SAMPLE_MS = 50;

let sampledAt = -Infinity;
let sampledMb = 0;
let smapsReadable: boolean | undefined;

/**
 * Memory this process uses, in MB: its unique set size (`Private_Clean +
 * Private_Dirty` of `/proc/self/smaps_rollup`) where Linux tells it, else
 * RSS. Sampled at most every {@link MEMORY_SAMPLE_MS} ms, so a burst of
 * Agent entries reads the file once.
 * @internal
 */
export function memoryUsageMb(now = performance.now()): number {
  if (now - sampledAt < MEMORY_SAMPLE_MS) return sampledMb;
  sampledAt = now;
  if (smapsReadable !== false) {
    try {
      const text = readFileSync("/proc/self/smaps_rollup", "utf8");
      let kb = 0;
      for (const match of text.matchAll(/^Private_(?:Clean|Dirty):\s+(\d+) kB/gm)) kb += Number(match[1]);
      smapsReadable = true;
      return (sampledMb = kb / 1024);
    } catch {
      smapsReadable = false;
    }
  }
  return (sampledMb = process.memoryUsage.rss() / 1024 / 1024);
}

/** Forgets the cached memory sample (tests). @internal */
export function resetMemorySample(): void {
  sampledAt = -Infinity;
}
