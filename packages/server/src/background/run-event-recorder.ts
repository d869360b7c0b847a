import { storedValue } from "./stored-json";
import type { RunChannel, StoredRunEvent } from "./run-channel";

/**
 * @internal Records one run's events on its {@link RunChannel} without
 * holding up the run: events are queued as they come and written in
 * batches, one write in flight at a time, in order. A failed write is
 * reported and its events dropped (the run goes on; its log has a gap that
 * a follower skips). {@link RunEventRecorder.flush} resolves once everything
 * queued so far is written.
 */
export class RunEventRecorder {
  private pending: StoredRunEvent["event"][] = [];
  private writing: Promise<void> | undefined;

  constructor(
    private readonly channel: RunChannel,
    private readonly runId: string,
    private readonly report: (error: unknown) => void,
  ) {}

  /** Queues `event` (a JSON copy: the run may change its objects afterwards). */
  record(event: object): void {
    this.pending.push(storedValue<StoredRunEvent["event"]>(event));
    this.writing ??= this.drain();
  }

  private async drain(): Promise<void> {
    // One microtask later: the events a step emits together go in one write.
    await Promise.resolve();
    while (this.pending.length > 0) {
      const batch = this.pending;
      this.pending = [];
      try {
        await this.channel.append(this.runId, batch);
      } catch (error) {
        this.report(error);
      }
    }
    this.writing = undefined;
  }

  /** Resolves once every event recorded so far is written (or reported as failed). */
  async flush(): Promise<void> {
    while (this.writing !== undefined) await this.writing;
  }
}
