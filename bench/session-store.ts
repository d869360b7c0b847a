/**
 * Session store benchmark: append throughput (single-node commits vs
 * batched), then load and history-selection time and memory for sessions of
 * 1k, 10k and 100k nodes, all on a real file store in a temp directory.
 *
 *   pnpm exec tsx --tsconfig tsconfig.test.json bench/session-store.ts
 *
 * Targets (issue 4): >= 50,000 nodes/s batched; history for the next request
 * from a 10k-node session in <= 5 ms. Issue 10: >= 100,000 nodes/s batched
 * (the store alone: operations built beforehand), and the combined
 * throughput of 4 writer processes on one session.
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
} from "../packages/core/src/session";

const TEXT = "The quick brown fox jumps over the lazy dog. ".repeat(4);

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)]!;
}

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
    yield { id: callId, role: "code", name: "Researcher.research", input: { question: TEXT }, predecessor: previousCall, metadata: { status: "completed", doc: "Research a question." } };
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
  const child = join(root, "packages/core/src/session/__fixtures__/session-store-child.ts");
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

  // Load and history selection.
  console.log("load and history for the next request (head = last node of the last call)");
  console.log("  nodes     load (read+graph)   select history   history nodes   heap used   rss");
  for (const size of [1_000, 10_000, 100_000]) {
    const sessionId = `s${size}`;
    store.createSession(sessionId);
    const writer = new SessionNodeWriter(store, sessionId, { batching: "manual" });
    let last = "";
    let index = 0;
    for (const node of runNodes(size)) {
      last = writer.append(node).id;
      if (++index % 5_000 === 0) writer.flush();
    }
    writer.flush();

    let graph = new SessionGraph();
    const loadTimes: number[] = [];
    for (let run = 0; run < 3; run++) loadTimes.push(time(() => (graph = writer.load())));
    // Heap in use while the graph is held (includes garbage not yet collected).
    const heapUsed = process.memoryUsage().heapUsed;

    const lastNode = graph.get(last)!;
    const options = { headId: last, currentCallId: lastNode.caller };
    let selected = 0;
    for (let run = 0; run < 5; run++) selectHistory(graph, options);
    const selectTimes: number[] = [];
    for (let run = 0; run < 21; run++) selectTimes.push(time(() => (selected = selectHistory(graph, options).length)));
    console.log(
      `  ${String(size).padEnd(9)} ${median(loadTimes).toFixed(1).padStart(8)} ms ${median(selectTimes).toFixed(2).padStart(16)} ms ${String(selected).padStart(15)} ${megabytes(heapUsed).padStart(12)} ${megabytes(process.memoryUsage().rss).padStart(9)}`,
    );
  }
  console.log("\n  target: history from a 10k-node session <= 5 ms (select history column)");
  store.close();
} finally {
  rmSync(directory, { recursive: true, force: true });
}
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
