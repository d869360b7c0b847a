/**
 * Session store benchmark, SQLite then PostgreSQL in one run: append
 * throughput (single-node commits, batched through a writer, the store
 * alone, 4 writer processes on one session), then for sessions of 10k, 100k
 * and 1M nodes the cost of opening a store to continue a session and of the
 * next request's history (read along the head's ancestry, the last 20
 * turns), never reading a session whole. The PostgreSQL part
 * (bench/session-store-postgres.ts) starts and stops its own server.
 *
 *   pnpm exec tsx --tsconfig tsconfig.test.json bench/session-store.ts
 *
 * Targets (issue 10): SQLite >= 100,000 nodes/s batched (the store alone);
 * next-request history <= 5 ms and opening a 1M-node session <= 50 ms
 * (median), for both stores.
 */
import { spawn } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import {
  SessionGraph,
  SessionNodeWriter,
  SessionStore,
  selectHistory,
  type SessionNodeInput,
  type SessionWriteOperation,
} from "@rein/session";
import { postgresStoreFigures } from "./session-store-postgres";
import { median, minMedianMax } from "./measure";

const TEXT = "The quick brown fox jumps over the lazy dog. ".repeat(4);


function time(work: () => void): number {
  const start = process.hrtime.bigint();
  work();
  return Number(process.hrtime.bigint() - start) / 1e6;
}

const megabytes = (bytes: number): string => `${(bytes / 1024 / 1024).toFixed(1)} MB`;

/**
 * A realistic run shape: each top-level call holds three model requests and
 * two tool calls, each tool call one model request of its own (8 nodes).
 * Returns the id of the last node, the head of the next request.
 */
function* runNodes(count: number): Generator<SessionNodeInput> {
  let previousCall: string | null = null;
  for (let call = 0, emitted = 0; emitted < count; call++) {
    const callId = `c${call}`;
    const inside: SessionNodeInput[] = [
      { id: `${callId}.l0`, role: "llm", name: "model", output: [{ type: "text", text: TEXT }], metadata: { usage: { input: 900, output: 80 } } },
      { id: `${callId}.t0`, role: "code", name: "Wiki.search", input: { query: TEXT.slice(0, 40) }, output: TEXT, metadata: { status: "completed" } },
      { id: `${callId}.l1`, role: "llm", name: "model", output: [{ type: "text", text: TEXT }] },
      { id: `${callId}.t1`, role: "code", name: "Wiki.read", input: { page: 1 }, output: TEXT, metadata: { status: "completed", expose: "io" } },
      { id: `${callId}.l2`, role: "llm", name: "model", output: [{ type: "text", text: TEXT }] },
    ];
    yield { id: callId, role: "code", name: "Researcher.research", input: { question: TEXT }, predecessor: previousCall, metadata: { status: "completed", doc: "Research a question.", renderRange: { turns: 20 } } };
    emitted++;
    let predecessor: string | null = null;
    for (const node of inside) {
      if (emitted >= count) return;
      yield { ...node, caller: callId, predecessor };
      emitted++;
      if (node.role === "code" && emitted < count) {
        yield { id: `${node.id}.l`, role: "llm", name: "model", caller: node.id, output: [{ type: "text", text: TEXT }] };
        emitted++;
      }
      predecessor = node.id;
    }
    previousCall = callId;
  }
}

/** The nodes of {@link runNodes} as append operations, values already snapshotted. */
function operationsOf(count: number): SessionWriteOperation[] {
  let seq = 0;
  return [...runNodes(count)].map((input) => ({
    kind: "append" as const,
    node: JSON.parse(
      JSON.stringify({ seq: seq++, createdAt: Date.now(), caller: null, predecessor: null, metadata: {}, ...input }),
    ) as SessionWriteOperation extends { node: infer N } ? N : never,
  }));
}

/** "min / median / max" of times in ms. */
function spread(values: number[]): string {
  const { min, median, max } = minMedianMax(values);
  return `${min.toFixed(1)} / ${median.toFixed(1)} / ${max.toFixed(1)}`;
}

/** Writes `count` nodes of {@link runNodes} into a new session, 5,000 per transaction, never all in memory at once. */
function buildSession(store: SessionStore, sessionId: string, count: number): void {
  store.createSession(sessionId);
  let batch: SessionWriteOperation[] = [];
  let seq = 0;
  const now = Date.now();
  for (const input of runNodes(count)) {
    const node = { seq: seq++, createdAt: now, caller: null, predecessor: null, metadata: {}, input: undefined, output: undefined, ...input };
    batch.push({ kind: "append", node: node as SessionWriteOperation extends { node: infer N } ? N : never });
    if (batch.length === 5_000) {
      store.commit(sessionId, batch);
      batch = [];
    }
  }
  if (batch.length > 0) store.commit(sessionId, batch);
}

/**
 * What a new process does to continue a session: open the store, take the
 * session's writer and select the history of its next request.
 */
function openAndContinue(path: string, sessionId: string): void {
  const store = new SessionStore({ path, shutdownFlush: false });
  try {
    const writer = new SessionNodeWriter(store, sessionId, { batching: "manual" });
    const head = writer.head!;
    selectHistory(writer.historyGraph(head, head), { headId: head, currentCallId: head, renderRange: { turns: 20 } });
  } finally {
    store.close();
  }
}

/** History for a request at `head` as a writer reads it afresh: along the ancestry, the last 20 turns. */
function nextRequestHistory(store: SessionStore, sessionId: string, head: string): number {
  const graph = new SessionGraph(store.readAncestry(sessionId, head, { turns: 20 }));
  return selectHistory(graph, { headId: head, currentCallId: head, renderRange: { turns: 20 } }).length;
}

function chunk<T>(items: T[], size: number): T[][] {
  const chunks: T[][] = [];
  for (let index = 0; index < items.length; index += size) chunks.push(items.slice(index, index + size));
  return chunks;
}

/** Four processes append to one session at once; returns their combined nodes/s. */
async function concurrentWriters(path: string): Promise<number> {
  const setup = new SessionStore({ path, shutdownFlush: false });
  setup.createSession("shared");
  setup.close();
  const root = resolve(__dirname, "..");
  const child = join(root, "packages/session/src/__fixtures__/session-store-child.ts");
  const startAt = Date.now() + 3_000;
  const runs = Array.from({ length: 4 }, () =>
    new Promise<[number, number, number]>((done, fail) => {
      const process_ = spawn(process.execPath, ["--require", require.resolve("tsx/cjs"), child, "throughput", path, "shared", "200", "10", String(startAt)], {
        cwd: root,
        env: { ...process.env, TSX_TSCONFIG_PATH: join(root, "tsconfig.test.json") },
        stdio: ["ignore", "pipe", "inherit"],
      });
      let output = "";
      process_.stdout.on("data", (data: Buffer) => (output += data.toString()));
      process_.on("close", (code) => {
        const match = /done (\d+) (\d+) (\d+)/.exec(output);
        if (code !== 0 || match === null) fail(new Error(`writer process failed (${code}): ${output}`));
        else done([Number(match[1]), Number(match[2]), Number(match[3])]);
      });
    }),
  );
  const results = await Promise.all(runs);
  const nodes = results.reduce((sum, [count]) => sum + count, 0);
  const elapsed = Math.max(...results.map(([, , end]) => end)) - Math.min(...results.map(([, start]) => start));
  const check = new SessionStore({ path, shutdownFlush: false });
  const stored = check.readNodes("shared");
  check.close();
  if (stored.length !== nodes || new Set(stored.map((node) => node.seq)).size !== nodes) throw new Error("concurrent writers lost or duplicated nodes");
  return Math.round(nodes / (elapsed / 1000));
}

async function main(): Promise<void> {
const directory = mkdtempSync(join(tmpdir(), "rein-bench-"));
try {
  const store = new SessionStore({ path: join(directory, "sessions.db"), shutdownFlush: false });
  console.log(`session store bench — ${store.location}\n`);

  // Append throughput.
  store.createSession("single");
  const single = new SessionNodeWriter(store, "single", { batching: "none" });
  const singleCount = 2_000;
  let nodes = runNodes(singleCount);
  const singleMs = time(() => {
    for (const node of nodes) single.append(node);
  });
  store.createSession("batched");
  const batched = new SessionNodeWriter(store, "batched", { batching: "manual" });
  const batchedCount = 100_000;
  nodes = runNodes(batchedCount);
  const batchedMs = time(() => {
    let index = 0;
    for (const node of nodes) {
      batched.append(node);
      if (++index % 1_000 === 0) batched.flush();
    }
    batched.flush();
  });
  console.log("append throughput (file store, WAL, synchronous=NORMAL)");
  console.log(`  single-node commits   ${Math.round(singleCount / (singleMs / 1000)).toLocaleString("en-US").padStart(9)} nodes/s  (${singleCount} nodes)`);
  console.log(`  batched, 1000 per tx  ${Math.round(batchedCount / (batchedMs / 1000)).toLocaleString("en-US").padStart(9)} nodes/s  (${batchedCount} nodes, through a writer)   target >= 50,000`);

  // The store alone: the same nodes as operations, built (and snapshotted) beforehand.
  store.createSession("store-only");
  const operationBatches = chunk(operationsOf(batchedCount), 1_000);
  const storeOnlyMs = time(() => {
    for (const operationBatch of operationBatches) store.commit("store-only", operationBatch);
  });
  console.log(`  store.commit, 1000 per tx ${Math.round(batchedCount / (storeOnlyMs / 1000)).toLocaleString("en-US").padStart(9)} nodes/s  (${batchedCount} nodes, store alone)   target >= 100,000`);
  console.log(`  4 processes, one session  ${(await concurrentWriters(join(directory, "shared.db"))).toLocaleString("en-US").padStart(9)} nodes/s  (combined; commitWithRetry, 10 nodes per commit)\n`);

  // Large sessions: opened and continued without being read whole.
  console.log("large sessions: open, and history for the next request (renderRange.turns 20: the last 20 turns)");
  console.log("  nodes       build      open (min/median/max)          next-request history (min/median/max)   history nodes   from the window   rss");
  for (const size of [10_000, 100_000, 1_000_000]) {
    const sessionId = `large${size}`;
    const buildMs = time(() => buildSession(store, sessionId, size));
    const head = store.head(sessionId)!;
    const opens: number[] = [];
    for (let run = 0; run < 7; run++) opens.push(time(() => openAndContinue(store.location, sessionId)));
    const histories: number[] = [];
    let selected = 0;
    for (let run = 0; run < 5; run++) nextRequestHistory(store, sessionId, head);
    for (let run = 0; run < 21; run++) histories.push(time(() => (selected = nextRequestHistory(store, sessionId, head))));
    // A writer that has seen the session selects from its window: no read at all.
    const writer = new SessionNodeWriter(store, sessionId, { batching: "manual" });
    const call = { headId: head, currentCallId: head, renderRange: { turns: 20 } };
    writer.historyGraph(head, head);
    const windowTimes: number[] = [];
    for (let run = 0; run < 21; run++) windowTimes.push(time(() => selectHistory(writer.historyGraph(head, head), call)));
    console.log(
      `  ${size.toLocaleString("en-US").padEnd(11)} ${(buildMs / 1000).toFixed(1).padStart(5)} s ${spread(opens).padStart(28)} ms ${spread(histories).padStart(30)} ms ${String(selected).padStart(15)} ${median(windowTimes).toFixed(3).padStart(13)} ms ${megabytes(process.memoryUsage().rss).padStart(9)}`,
    );
  }
  console.log("\n  targets: next-request history <= 5 ms at 1M nodes; opening a 1M-node session <= 50 ms (median), nothing loaded whole");
  store.close();

  // The same figures for PostgreSQL, in this run (bench/session-store-postgres.ts starts and stops the server).
  console.log("");
  for (const line of await postgresStoreFigures()) console.log(line);
} finally {
  rmSync(directory, { recursive: true, force: true });
}
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
