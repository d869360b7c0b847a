import type { RunEvent } from "rein";
import type { ApprovalRequestEvent } from "../approvals";
import type { TrackedRun } from "../run-feed";
import type { BackgroundQueue } from "./background-queue";
import type { RunChannel } from "./run-channel";

/** How often a followed run whose log has not ended is looked up in the queue (a job out of retries writes no `run-end`). */
const CHECK_MS = 15_000;

/**
 * @internal Feeds `tracked` (the runs feed's entry of a background run this
 * server queued) from the run's log in `channel`: each event the worker
 * executing it records, read as it is appended (woken by the channel),
 * until the log's `run-end`, or until the queue says the run ended without
 * one (a job out of retries). Returns the function that stops following.
 * A failed read is reported (`report`) and tried again at the next wake-up.
 */
export function followQueued(options: {
  readonly channel: RunChannel;
  readonly queue: BackgroundQueue;
  readonly runId: string;
  readonly tracked: TrackedRun;
  readonly report: (error: unknown) => void;
  /** True once the server is closing: following stops quietly. */
  readonly closing: () => boolean;
}): () => void {
  const { channel, queue, runId, tracked, report, closing } = options;
  let after = 0;
  let reading: Promise<void> | undefined;
  let again = false;
  let stopped = false;
  const stop = () => {
    if (stopped) return;
    stopped = true;
    unfollow();
    clearInterval(check);
  };
  const end = (status: "completed" | "error" | "cancelled", error?: { name: string; message: string }) => {
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
  const wake = () => {
    if (reading !== undefined) {
      again = true;
      return;
    }
    reading = readAll()
      .catch((error: unknown) => {
        if (!stopped && !closing()) report(error);
      })
      .finally(() => (reading = undefined));
  };
  const unfollow = channel.follow(runId, wake);
  const check = setInterval(() => {
    if (closing()) return stop();
    void queue.get(runId).then((record) => {
      if (stopped || record === undefined) return;
      // Its log may hold the last events still: read them first, then end as the queue has it.
      if (record.state === "completed" || record.state === "error" || record.state === "cancelled") {
        wake();
        void (reading ?? Promise.resolve()).then(() => {
          if (!stopped) end(record.state as "completed" | "error" | "cancelled", record.outcome?.error);
        });
      }
    }, report);
  }, CHECK_MS);
  check.unref();
  wake();
  return stop;
}
