/**
 * @rein/server — run Rein agents over HTTP (Hono): listed entries only,
 * reach passed on through `X-Agent-Policy`, SSE run events, sessions and graphs.
 * @example
 * ```ts
 * import { createServer, serve } from "@rein/server";
 * await serve({ entries: { research: [Researcher, "research"] }, port: 8080 });
 * ```
 * @packageDocumentation
 */
export { createServer } from "./create-server";
export type { CreateServerOptions, RunResponse } from "./create-server";
export { serve } from "./serve";
export { entryClassFor } from "./resume-runs";
export { checkEntryProviders } from "./entry-providers";
export type { ServeOptions, ListenOptions, RunningServer } from "./serve";
export type { Entry, Entries, EntryInit, EntryFactory, EntryClass } from "./entries";
export type { ErrorBody, ErrorType } from "./http-error";
export { API_KEY_SCOPES, verifyApiKey, InMemoryApiKeyStore, SqliteApiKeyStore, SpendCapExceededError } from "./auth";
export type { ApiKeyScope, ApiKeyRecord, StoredApiKey, IssuedApiKey, ApiKeyStore, CreateApiKeyOptions, SqliteApiKeyStoreOptions } from "./auth";
export type { AuthOptions } from "./auth/caller";
export { createInspector } from "./inspector/create-inspector";
export type { CreateInspectorOptions } from "./inspector/create-inspector";
export type { ApprovalRequestEvent, PendingApproval, ResumedTurn } from "./approvals";
export type { RunSummary, ReachFigures, RunFeedMessage } from "./run-feed";
export { PgBossQueue, startBackgroundWorker } from "./background";
export { PostgresRunChannel, DEFAULT_RUN_EVENT_RETENTION_MS } from "./background";
export type { PostgresRunChannelOptions, RunChannel, RunControl, StoredRunEvent } from "./background";
export type { PgBossQueueOptions, BackgroundWorker, BackgroundWorkerOptions, BackgroundQueue, BackgroundJob, BackgroundOutcome, BackgroundRunRecord, BackgroundRunState } from "./background";
