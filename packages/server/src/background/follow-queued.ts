import type { RunEvent } from "rein";
import type { ApprovalRequestEvent } from "../approvals";
import type { TrackedRun } from "../run-feed";
import type { BackgroundQueue } from "./background-queue";
import type { RunChannel } from "./run-channel";

/** How often the followed runs whose logs went quiet are looked up in the queue (a job out of retries writes no `run-end`). */
const CHECK_MS = 30_000;
/** Runs looked up in the queue per check, the longest quiet first: a backlog of queued runs costs the database little. */
const CHECKS_PER_ROUND = 20;
/** Background runs one server follows at once; a run queued beyond them is not listed in its feed (`GET /v1/runs` lists it). */
export const MAX_FOLLOWED = 500;

interface Follower {
  readonly runId: string;
  /** When its log last gave an event (or it began to be followed). */
  heard: number;
  /** Reads what is new in the log, then resolves. */
  readonly wake: () => Promise<void>;
  readonly end: (status: "completed" | "error" | "cancelled", error?: { name: string; message: string }) => void;
  /** Stops following without ending the run in the feed (its server is closing). */
  readonly stop: () => void;
  /** Its server's: true once it is closing. */
  readonly closing: () => boolean;
  readonly report: (error: unknown) => void;
}

/** The runs a queue's server follows, and the one timer that looks up the quiet ones. */
interface Followed {
  readonly runs: Map<string, Follower>;
  timer: ReturnType<typeof setInterval> | undefined;
}

const byQueue = new WeakMap<BackgroundQueue, Followed>();

/**
 * @internal Feeds `tracked` (the runs feed's entry of a background run this
 * server queued) from the run's log in `channel`: each event the worker
 * executing it records, read as it is appended (woken by the channel),
 * until the log's `run-end`. A run whose log stays quiet is looked up in
 * the queue now and then (one timer for all the runs followed on a queue,
 * a few runs a round): one the queue says ended without a `run-end` (a job
 * out of retries) ends as the queue has it; once its server is closing, a
 * run stops being followed at its next wake-up or look-up. False when {@link MAX_FOLLOWED}
 * runs are followed already (the run is then not tracked). A failed read
 * is reported and tried again at the next wake-up.
 */
export function followQueued(options: {
  readonly channel: RunChannel;
  readonly queue: BackgroundQueue;
  readonly runId: string;
  readonly track: () => TrackedRun;
  readonly report: (error: unknown) => void;
  /** True once the server is closing: following stops quietly. */
  readonly closing: () => boolean;
}): boolean {
  const { channel, queue, runId, report, closing } = options;
  const followed = byQueue.get(queue) ?? { runs: new Map<string, Follower>(), timer: undefined };
  byQueue.set(queue, followed);
  if (followed.runs.size >= MAX_FOLLOWED) return false;
  const tracked = options.track();
  let after = 0;
  let reading: Promise<void> | undefined;
  let again = false;
  let stopped = false;
  const stop = () => {
    if (stopped) return;
    stopped = true;
    unfollow();
    followed.runs.delete(runId);
    if (followed.runs.size === 0 && followed.timer !== undefined) {
      clearInterval(followed.timer);
      followed.timer = undefined;
    }
  };
  const end = (status: "completed" | "error" | "cancelled", error?: { name: string; message: string }) => {
    if (stopped) return;
    stop();
    tracked.end(status, error);
  };
  const readAll = async () => {
    do {
      again = false;
      for (;;) {
        if (stopped || closing()) return stop();
        const events = await channel.read(runId, after, 500);
        if (events.length === 0) break;
        follower.heard = Date.now();
        for (const { seq, event } of events) {
          after = seq;
          if (event.type === "run-end") {
            const { status, error } = event as { status?: unknown; error?: { name?: unknown; message?: unknown } };
            const ended = status === "completed" || status === "cancelled" ? status : "error";
            return end(ended, error === undefined ? undefined : { name: String(error.name ?? "Error"), message: String(error.message ?? "") });
          }
          tracked.event(event as unknown as RunEvent | ApprovalRequestEvent);
        }
      }
    } while (again);
  };
  const wake = (): Promise<void> => {
    if (reading !== undefined) {
      again = true;
      return reading;
    }
    reading = readAll()
      .catch((error: unknown) => {
        if (!stopped && !closing()) report(error);
      })
      .finally(() => {
        reading = undefined;
        // Woken after the loop's last read and before this: read once more.
        if (again && !stopped) void wake();
      });
    return reading;
  };
  const follower: Follower = { runId, heard: Date.now(), wake, end, stop, closing, report };
  followed.runs.set(runId, follower);
  const unfollow = channel.follow(runId, () => void wake());
  if (followed.timer === undefined) {
    followed.timer = setInterval(() => void checkQuietRuns(queue), CHECK_MS);
    followed.timer.unref();
  }
  void wake();
  return true;
}

/**
 * @internal Looks up in `queue` the followed runs whose logs were quiet for
 * `quietMs`, the longest quiet first, a few a round; one that ended there
 * ends after its log is read to the end, one the queue no longer knows ends
 * as an error. Runs of a server that is closing stop being followed. The
 * timer calls it every 30 s.
 */
export async function checkQuietRuns(queue: BackgroundQueue, quietMs = CHECK_MS): Promise<void> {
  const followed = byQueue.get(queue);
  if (followed === undefined) return;
  for (const follower of [...followed.runs.values()]) if (follower.closing()) follower.stop();
  const quiet = [...followed.runs.values()].filter((follower) => follower.heard <= Date.now() - quietMs).sort((a, b) => a.heard - b.heard);
  for (const follower of quiet.slice(0, CHECKS_PER_ROUND)) {
    try {
      const record = await queue.get(follower.runId);
      follower.heard = Date.now();
      if (record === undefined) {
        follower.end("error", { name: "Error", message: "the queue no longer knows this run" });
        continue;
      }
      if (record.state !== "completed" && record.state !== "error" && record.state !== "cancelled") continue;
      // Its log may hold its last events still: read them first, then end as the queue has it (a no-op if the log ended it).
      await follower.wake();
      follower.end(record.state, record.outcome?.error);
    } catch (error) {
      if (!follower.closing()) follower.report(error);
    }
  }
}
