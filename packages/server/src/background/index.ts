export { PgBossQueue } from "./pg-boss-queue";
export type { PgBossQueueOptions } from "./pg-boss-queue";
export { startBackgroundWorker } from "./background-worker";
export type { BackgroundWorker, BackgroundWorkerOptions } from "./background-worker";
export type { BackgroundQueue, BackgroundJob, BackgroundOutcome, BackgroundRunRecord, BackgroundRunState } from "./background-queue";
export { PostgresRunChannel, DEFAULT_RUN_EVENT_RETENTION_MS } from "./postgres-run-channel";
export type { PostgresRunChannelOptions } from "./postgres-run-channel";
export type { RunChannel, RunControl, StoredRunEvent } from "./run-channel";
