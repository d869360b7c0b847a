import { readFileSync } from "node:fs";

let zone: string | undefined;

/**
 * The trust zone this process runs in: `REIN_ZONE` when set, else
 * `docker-network` when `/proc/1/cgroup` names docker, kubepods or
 * containerd, else `local`. Worked out once per process (a process does not
 * move between zones); {@link resetZone} reads it again.
 * @example
 * ```ts
 * detectZone(); // "local"
 * ```
 */
export function detectZone(): string {
  if (zone !== undefined) return zone;
  const named = process.env["REIN_ZONE"];
  if (named !== undefined && named.trim() !== "") return (zone = named.trim());
  let cgroup = "";
  try {
    cgroup = readFileSync("/proc/1/cgroup", "utf8");
  } catch {
    /* not Linux, or not readable: local */
  }
  return (zone = /docker|kubepods|containerd/.test(cgroup) ? "docker-network" : "local");
}

/** Forgets the detected zone: the next {@link detectZone} reads `REIN_ZONE` and `/proc/1/cgroup` again (tests, or after changing `REIN_ZONE`). */
export function resetZone(): void {
  zone = undefined;
}

/** How often memory is sampled while Agent entries keep coming, in ms. */
export const MEMORY_SAMPLE_MS = 50;

/** Samples in a row that no entry asked for, after which the sampler stops (one second): an idle process wakes for nothing. */
const IDLE_SAMPLES_BEFORE_STOP = 20;

let sampledMb: number | undefined;
let smapsReadable: boolean | undefined;
/** An entry asked for memory since the last sample: the timer samples again. */
let wanted = false;
/** Samples in a row no entry asked for. */
let idleSamples = 0;
let timer: ReturnType<typeof setInterval> | undefined;

/** Reads the process's memory now: the injected reader (tests), else USS from `/proc/self/smaps_rollup`, else RSS. */
function readMemoryMb(): number {
  if (memoryReader !== undefined) return memoryReader();
  return readProcessMemoryMb();
}

/** USS from `/proc/self/smaps_rollup`, else RSS. */
function readProcessMemoryMb(): number {
  if (smapsReadable !== false) {
    try {
      const text = readFileSync("/proc/self/smaps_rollup", "utf8");
      let kb = 0;
      for (const match of text.matchAll(/^Private_(?:Clean|Dirty):\s+(\d+) kB/gm)) kb += Number(match[1]);
      smapsReadable = true;
      return kb / 1024;
    } catch {
      smapsReadable = false;
    }
  }
  return process.memoryUsage.rss() / 1024 / 1024;
}

/**
 * Memory this process uses, in MB: its unique set size (`Private_Clean +
 * Private_Dirty` of `/proc/self/smaps_rollup`) where Linux tells it, else
 * RSS. The first call reads it; after that a timer samples it every
 * {@link MEMORY_SAMPLE_MS} ms, off the call path and only while calls keep
 * asking (reading the file takes ~1 ms), so an Agent entry reads no file
 * and no clock. After a second in which no call asked, the timer stops and
 * the sample is dropped: the next call reads afresh (never a figure from
 * before an idle spell), and an idle process is not woken 20 times a second.
 * @internal
 */
export function memoryUsageMb(): number {
  wanted = true;
  if (sampledMb !== undefined) return sampledMb;
  sampledMb = readMemoryMb();
  idleSamples = 0;
  timer ??= setInterval(sample, MEMORY_SAMPLE_MS);
  timer.unref?.();
  wanted = false;
  return sampledMb;
}

function sample(): void {
  if (wanted) {
    wanted = false;
    idleSamples = 0;
    sampledMb = readMemoryMb();
  } else if (++idleSamples >= IDLE_SAMPLES_BEFORE_STOP) stopSampling();
}

/** Stops the sampler and drops its figure: the next {@link memoryUsageMb} reads memory and starts it again. */
function stopSampling(): void {
  clearInterval(timer);
  timer = undefined;
  sampledMb = undefined;
}

/** Reads memory again now (tests, and a caller that needs a fresh figure). @internal */
export function resetMemorySample(): void {
  sampledMb = readMemoryMb();
}

let memoryReader: (() => number) | undefined;

/**
 * Replaces how memory is read (in MB) until called again with `undefined`,
 * and drops the sample taken the old way (the next figure is read with
 * `reader`, and the sampler starts afresh): a test of the memory limit states the
 * process's memory instead of allocating and reading RSS, which a garbage
 * collection or the allocator can move by more than the limit tested.
 * @internal
 * @example
 * ```ts
 * let mb = 100;
 * setMemoryReader(() => mb);
 * mb = 140; // grew by 40 MB
 * resetMemorySample();
 * ```
 */
export function setMemoryReader(reader: (() => number) | undefined): void {
  memoryReader = reader;
  stopSampling();
}
