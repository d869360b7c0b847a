/**
 * The numbers a caller gives a node (`createdAt`, a proposed `seq`) are kept
 * alike by every store (found by an attack review, 2026-12-03): a fractional
 * `createdAt` (`performance.timeOrigin + performance.now()`) was stored by
 * SQLite and in memory but failed every PostgreSQL commit (bigint) for good;
 * a NaN `seq` made the in-memory store's seqs NaN from then on.
 */
import { InMemorySessionStore, SessionNodeWriter, SessionStore, type SessionStoreLike } from "@rein/session";
import { PostgresSessionStore } from "./postgres-session-store";
import { freshSchemaName, startEmbeddedPostgres, type EmbeddedPostgresServer } from "./__fixtures__/embedded-postgres";

let server: EmbeddedPostgresServer | undefined;
beforeAll(async () => {
  server = await startEmbeddedPostgres();
}, 120_000);
afterAll(async () => {
  await server?.stop();
});

const stores: [string, () => SessionStoreLike][] = [
  ["memory", () => new InMemorySessionStore()],
  ["sqlite", () => new SessionStore({ path: ":memory:" })],
  ["postgres", () => new PostgresSessionStore({ connectionString: server!.connectionString, schema: freshSchemaName(), shutdownFlush: false })],
];

describe.each(stores)("%s", (_name, make) => {
  it("a fractional createdAt is stored truncated to the ms, and the writer goes on", () => {
    const store = make();
    try {
      store.createSession("s");
      const writer = new SessionNodeWriter(store, "s", { batching: "manual" });
      writer.append({ id: "precise", role: "code", name: "A.run", createdAt: 1_700_000_000_000.25 });
      writer.flush();
      writer.append({ id: "plain", role: "code", name: "A.run", predecessor: "precise" });
      writer.flush();
      const nodes = store.readNodes("s");
      expect(nodes.map((node) => node.id)).toEqual(["precise", "plain"]);
      expect(nodes[0]!.createdAt).toBe(1_700_000_000_000);
    } finally {
      store.close();
    }
  });

  it("a seq or createdAt that is not a number a store can keep is a TypeError at append, naming the node; nothing is queued", () => {
    const store = make();
    try {
      store.createSession("s");
      const writer = new SessionNodeWriter(store, "s", { batching: "manual" });
      for (const seq of [Number.NaN, 1.5, -1, Infinity]) {
        expect(() => writer.append({ id: "a", role: "code", name: "A.run", seq })).toThrow(/node a's seq must be a non-negative integer/);
      }
      for (const createdAt of [Number.NaN, Infinity, 1e300]) {
        expect(() => writer.append({ id: "a", role: "code", name: "A.run", createdAt })).toThrow(/node a's createdAt must be a finite number of epoch ms/);
      }
      writer.append({ id: "b", role: "code", name: "A.run" });
      writer.append({ id: "c", role: "code", name: "A.run", predecessor: "b" });
      writer.flush();
      const seqs = store.readNodes("s").map((node) => node.seq);
      expect(seqs).toEqual([0, 1]);
    } finally {
      store.close();
    }
  });

  it("a direct commit proposing a seq that is not an integer gets the next one", () => {
    const store = make();
    try {
      store.createSession("s");
      const node = (id: string, seq: number) => ({ kind: "append" as const, node: { id, seq, createdAt: 1, role: "code" as const, name: "A.run", input: undefined, output: undefined, caller: null, predecessor: null, metadata: {} } });
      store.commit("s", [node("a", Number.NaN), node("b", 2.5)]);
      store.commit("s", [node("c", 0)]);
      const seqs = store.readNodes("s").map((stored) => stored.seq);
      expect(seqs.every(Number.isSafeInteger)).toBe(true);
      expect(new Set(seqs).size).toBe(3);
      expect(Number.isSafeInteger(store.getSession("s").lastSeq)).toBe(true);
    } finally {
      store.close();
    }
  });
});
