import type { BackgroundJob, BackgroundOutcome, BackgroundQueue, BackgroundRunRecord } from "../background/background-queue";
import type { RunChannel, RunControl, StoredRunEvent } from "../background/run-channel";

/** A run channel in memory: each run's log, insert-once control rows, and their delivery to this process's handlers. */
export class MemoryChannel implements RunChannel {
  readonly logs = new Map<string, StoredRunEvent[]>();
  readonly controls: RunControl[] = [];
  readonly subjects = new Set<string>();
  readonly handlers = new Set<(request: RunControl) => void>();
  readonly followers = new Map<string, Set<() => void>>();
  async append(runId: string, events: readonly StoredRunEvent["event"][]): Promise<void> {
    const log = this.logs.get(runId) ?? [];
    for (const event of events) log.push({ seq: log.length + 1, event });
    this.logs.set(runId, log);
    for (const wake of this.followers.get(runId) ?? []) wake();
  }
  async read(runId: string, afterSeq: number, limit = 500): Promise<StoredRunEvent[]> {
    return (this.logs.get(runId) ?? []).slice(afterSeq, afterSeq + limit);
  }
  follow(runId: string, wake: () => void): () => void {
    const set = this.followers.get(runId) ?? new Set();
    set.add(wake);
    this.followers.set(runId, set);
    return () => set.delete(wake);
  }
  async control(request: RunControl): Promise<boolean> {
    const subject = `${request.runId}|${request.action === "cancel" ? "cancel" : `call:${request.toolCallId}`}`;
    if (this.subjects.has(subject)) return false;
    this.subjects.add(subject);
    this.controls.push(request);
    for (const handler of this.handlers) handler(request);
    return true;
  }
  async controlsOf(runId: string): Promise<RunControl[]> {
    return this.controls.filter((request) => request.runId === runId);
  }
  onControl(handler: (request: RunControl) => void): () => void {
    this.handlers.add(handler);
    return () => this.handlers.delete(handler);
  }
  async close(): Promise<void> {}
}

/** A queue in memory: a job is queued until work() has a handler, then executed at once; `done` has each execution. */
export class MemoryQueue implements BackgroundQueue {
  readonly records = new Map<string, BackgroundRunRecord>();
  readonly done: Promise<void>[] = [];
  readonly channel: MemoryChannel | undefined;
  private handler: ((job: BackgroundJob) => Promise<BackgroundOutcome>) | undefined;
  constructor(options: { channel?: boolean } = {}) {
    this.channel = options.channel === true ? new MemoryChannel() : undefined;
  }
  async send(job: BackgroundJob): Promise<void> {
    this.records.set(job.runId, { job, state: "queued" });
    if (this.handler !== undefined) this.take(job);
  }
  async get(runId: string): Promise<BackgroundRunRecord | undefined> {
    return this.records.get(runId);
  }
  async work(_concurrency: number, handler: (job: BackgroundJob) => Promise<BackgroundOutcome>): Promise<void> {
    this.handler = handler;
    for (const record of this.records.values()) if (record.state === "queued") this.take(record.job);
  }
  async stop(): Promise<void> {
    this.handler = undefined;
  }
  private take(job: BackgroundJob): void {
    this.records.set(job.runId, { job, state: "running" });
    this.done.push(this.handler!(job).then((outcome) => void this.records.set(job.runId, { job, state: outcome.status, outcome })));
  }
}
