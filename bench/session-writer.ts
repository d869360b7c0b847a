/**
 * Per-turn cost of recording alone: what `SessionNodeWriter` and the
 * in-memory store spend on the nodes of one model-tool turn (4 model
 * requests, 3 tool calls), without the runtime around them. Per turn:
 * 4 llm nodes appended with `{ owned: true }`, each followed by `flush()`
 * (as the runtime commits every answered request), and 3 code nodes
 * appended with a JSON snapshot (`status: "running"`), each followed by one
 * `update` (output, `status: "completed"`) that folds into the queued append.
 * `batching: "manual"`, so only the explicit flushes commit.
 *
 * Each round records TURNS turns into a fresh store and writer (the store
 * keeps every node, as it must; the writer should keep nothing per node).
 * Rounds repeat until the figures settle, then ROUNDS are measured.
 *
 * Target: writer + store ≤ 8 µs per turn (median).
 * Run: pnpm exec tsx --tsconfig tsconfig.test.json bench/session-writer.ts
 *   (profile: TSX_TSCONFIG_PATH=tsconfig.test.json node --cpu-prof --import tsx bench/session-writer.ts)
 */
import { setFlagsFromString } from "node:v8";
import { runInNewContext } from "node:vm";
import { InMemorySessionStore, SessionNodeWriter } from "@rein/core";

const TURNS = 2_000;
const ROUNDS = 9;
const MAX_WARMUP_ROUNDS = 30;

let nextId = 0;

function recordTurn(writer: SessionNodeWriter): void {
  let tail: string | null = null;
  for (let request = 0; request < 4; request++) {
    const llm = `n${++nextId}`;
    writer.append(
      {
        id: llm,
        role: "llm",
        name: "model",
        input: { content: [{ type: "text", text: "Look up k0, k1 and k2." }] },
        output: { content: [{ type: "tool_use", id: "c1", name: "lookup", input: { key: "k1" } }] },
        caller: null,
        predecessor: tail,
        metadata: { status: "completed", model: "model", usage: { inputTokens: 1, outputTokens: 1 }, stopReason: "tool_use" },
      },
      { owned: true },
    );
    tail = llm;
    writer.flush();
    if (request === 3) break;
    const code = `n${++nextId}`;
    writer.append({
      id: code,
      role: "code",
      name: "Lookup.lookup",
      input: ["k1"],
      caller: null,
      predecessor: tail,
      metadata: { status: "running", doc: "Look a key up.", toolCallId: "c1" },
    });
    writer.update(code, { output: "value of k1", metadata: { status: "completed" } });
    tail = code;
  }
}

function freshWriter(): SessionNodeWriter {
  const store = new InMemorySessionStore();
  store.createSession("bench", {});
  return new SessionNodeWriter(store, "bench", { batching: "manual" });
}

/** µs per turn over one round of TURNS turns into a fresh store. */
function round(): number {
  const writer = freshWriter();
  const start = process.hrtime.bigint();
  for (let turn = 0; turn < TURNS; turn++) recordTurn(writer);
  return Number(process.hrtime.bigint() - start) / TURNS / 1000;
}

/**
 * Heap bytes a turn leaves behind (store and writer), between two full
 * collections: what every later collection has to trace. Includes the
 * turn's own values, which the store must keep.
 */
function retainedBytesPerTurn(): number {
  setFlagsFromString("--expose-gc");
  const collect = runInNewContext("gc") as () => void;
  collect();
  const before = process.memoryUsage().heapUsed;
  const writer = freshWriter();
  for (let turn = 0; turn < TURNS; turn++) recordTurn(writer);
  collect();
  const retained = process.memoryUsage().heapUsed - before;
  // Keeps the store alive through the second collection.
  if (writer.pending !== 0) throw new Error("unreachable: every turn ends with a flush");
  return retained / TURNS;
}

const median = (values: readonly number[]): number => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!;

/** Runs rounds until three in a row lie within 15% of their median (or MAX_WARMUP_ROUNDS). */
function warmUp(): number {
  const recent: number[] = [];
  for (let count = 1; count <= MAX_WARMUP_ROUNDS; count++) {
    recent.push(round());
    if (recent.length > 3) recent.shift();
    if (recent.length === 3) {
      const middle = median(recent);
      if (recent.every((value) => Math.abs(value - middle) <= 0.15 * middle)) return count;
    }
  }
  return MAX_WARMUP_ROUNDS;
}

/** Prints and returns the min/median/max µs per turn of ROUNDS measured rounds. */
export function benchSessionWriter(): { min: number; median: number; max: number } {
  console.log("\n== session recording per model-tool turn (4 llm nodes, 3 code nodes + updates; in-memory store, manual batching) ==");
  const warmup = warmUp();
  const rounds: number[] = [];
  for (let count = 0; count < ROUNDS; count++) rounds.push(round());
  const figures = { min: Math.min(...rounds), median: median(rounds), max: Math.max(...rounds) };
  console.log(`rounds: ${rounds.map((value) => value.toFixed(1)).join(" ")} µs/turn (after ${warmup} warm-up rounds of ${TURNS} turns)`);
  console.log(
    `writer + store: min ${figures.min.toFixed(1)} / median ${figures.median.toFixed(1)} / max ${figures.max.toFixed(1)} µs/turn — target median ≤ 8 µs (${figures.median <= 8 ? "met" : "NOT met"})`,
  );
  console.log(`retained by store + writer: ${Math.round(retainedBytesPerTurn())} bytes/turn (7 nodes, values included)`);
  return figures;
}

if (require.main === module) benchSessionWriter();
