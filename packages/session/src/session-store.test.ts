import { mkdtempSync, readFileSync, rmSync, writeFileSync, existsSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import Database from "libsql";
import { SessionStore } from "./session-store";
import { SESSION_MIGRATIONS } from "./session-schema";
import { SessionNodeWriter } from "./session-node-writer";
import {
  ForeignDatabaseError,
  SessionSchemaVersionError,
  SessionStoreCorruptError,
  SessionStoreError,
} from "./session-errors";

let directory: string;
const open: SessionStore[] = [];
function openStore(path = join(directory, "sessions.db")): SessionStore {
  const store = new SessionStore({ path, shutdownFlush: false });
  open.push(store);
  return store;
}

beforeEach(() => {
  directory = mkdtempSync(join(tmpdir(), "rein-session-"));
});
afterEach(() => {
  for (const store of open.splice(0)) store.close();
  rmSync(directory, { recursive: true, force: true });
});

test("the default path is .rein/sessions.db under the working directory, created on demand", () => {
  const cwd = jest.spyOn(process, "cwd").mockReturnValue(directory);
  try {
    const store = new SessionStore({ shutdownFlush: false });
    open.push(store);
    expect(store.location).toBe(join(directory, ".rein", "sessions.db"));
    expect(existsSync(join(directory, ".rein", "sessions.db"))).toBe(true);
  } finally {
    cwd.mockRestore();
  }
});

test("the file is in WAL mode and records its schema version in rein_migrations", () => {
  openStore().close();
  const db = new Database(join(directory, "sessions.db"));
  try {
    expect(db.prepare("PRAGMA journal_mode").raw().get()).toEqual(["wal"]);
    expect(db.prepare("SELECT version, name FROM rein_migrations").raw().all()).toEqual([
      [1, "sessions and nodes"],
      [2, "ancestry index and node count"],
      [3, "resumable runs and their leases"],
      [4, "lease epochs"],
      [5, "consumed keys"],
    ]);
  } finally {
    db.close();
  }
});

test("a file of schema version 1 is migrated to the current version (ancestry index, node count, runs, lease epochs, consumed keys) on open, its nodes kept", () => {
  const first = openStore();
  first.createSession("s1");
  first.commit("s1", [{ kind: "append", node: { id: "c1", seq: 0, createdAt: 1, role: "code", name: "A.ask", input: 1, output: 2, caller: null, predecessor: null, metadata: {} } }]);
  first.close();
  const db = new Database(first.location);
  db.exec(
    "DROP TABLE rein_consumed; DROP TABLE rein_runs; DELETE FROM rein_migrations WHERE version IN (3, 4, 5); " +
      "DROP INDEX rein_nodes_by_caller; ALTER TABLE rein_sessions DROP COLUMN node_count; DELETE FROM rein_migrations WHERE version = 2",
  );
  db.close();
  const reopened = openStore(first.location);
  expect(reopened.readAncestry("s1", "c1").map((node) => node.id)).toEqual(["c1"]);
  expect(reopened.getSession("s1").nodeCount).toBe(1);
  expect(reopened.listRuns()).toEqual([]);
  reopened.registerRun("r1", "s1", "A.run", 1000);
  expect(reopened.getRun("r1")).toMatchObject({ state: "running", owned: true, leaseEpoch: 1 });
  reopened.close();
  const check = new Database(first.location);
  try {
    expect(check.prepare("SELECT version FROM rein_migrations ORDER BY version").raw().all()).toEqual(SESSION_MIGRATIONS.map((migration) => [migration.version]));
    expect(check.prepare("SELECT name FROM sqlite_master WHERE type = 'index' AND name LIKE 'rein_nodes_by_%' ORDER BY name").raw().all()).toEqual([
      ["rein_nodes_by_caller"],
      ["rein_nodes_by_seq"],
    ]);
  } finally {
    check.close();
  }
});

test("a file of schema version 3 gains lease epochs on open: its runs start at epoch 1, and claims count on from there", () => {
  const first = openStore();
  first.createSession("s1");
  first.registerRun("r1", "s1", "A.run", 60_000);
  first.releaseRun("r1", "interrupted", null);
  first.close();
  const db = new Database(first.location);
  db.exec("DROP TABLE rein_consumed; ALTER TABLE rein_runs DROP COLUMN lease_epoch; DELETE FROM rein_migrations WHERE version > 3");
  db.close();
  const reopened = openStore(first.location);
  expect(reopened.getRun("r1")).toMatchObject({ state: "interrupted", leaseEpoch: 1 });
  expect(reopened.claimRun("r1", ["interrupted"], 60_000, 1)).toBe(true);
  expect(reopened.getRun("r1")).toMatchObject({ state: "running", leaseEpoch: 2 });
});

test("sessions, nodes and head survive closing and reopening the file", () => {
  const first = openStore();
  first.createSession("s1", { agentId: "Researcher" });
  const writer = new SessionNodeWriter(first, "s1");
  writer.append({ id: "c1", role: "code", name: "A.ask", input: { q: 1 }, metadata: { status: "completed" } });
  writer.append({ id: "l1", role: "llm", name: "model", caller: "c1", output: [{ type: "text", text: "hi" }] });
  first.close();

  const second = openStore();
  expect(second.getSession("s1")).toMatchObject({ agentId: "Researcher", headId: "c1", nodeCount: 2, lastSeq: 1 });
  expect(second.readNodes("s1")).toEqual([
    expect.objectContaining({ id: "c1", seq: 0, input: { q: 1 }, output: undefined, caller: null }),
    expect.objectContaining({ id: "l1", seq: 1, caller: "c1", output: [{ type: "text", text: "hi" }] }),
  ]);
  // A writer on the reopened session continues the seq numbering.
  expect(new SessionNodeWriter(second, "s1").append({ id: "c2", role: "code", name: "A.ask", predecessor: "c1" }).seq).toBe(2);
});

test("WAL: a second connection sees nodes once committed, not while batched", async () => {
  const writerStore = openStore();
  const readerStore = openStore();
  writerStore.createSession("s1");
  expect(readerStore.hasSession("s1")).toBe(true);
  const writer = new SessionNodeWriter(writerStore, "s1");
  writer.append({ id: "a", role: "user", name: "user" });
  expect(readerStore.readNodes("s1")).toHaveLength(0);
  await new Promise((resolve) => setImmediate(resolve));
  expect(readerStore.readNodes("s1").map((node) => node.id)).toEqual(["a"]);
  writer.append({ id: "b", role: "user", name: "user", predecessor: "a" });
  writer.flush();
  expect(readerStore.readNodes("s1").map((node) => node.id)).toEqual(["a", "b"]);
  expect(readerStore.head("s1")).toBe("b");
});

test("opening a second store does not interrupt nodes running in a live store", () => {
  const running = openStore();
  running.createSession("s1");
  const writer = new SessionNodeWriter(running, "s1");
  writer.append({ id: "c", role: "code", name: "A.run", metadata: { status: "running" } });
  writer.flush();
  const other = openStore();
  expect(other.readNodes("s1")[0]!.metadata["status"]).toBe("running");
  running.close();
  expect(other.readNodes("s1")[0]!.metadata["status"]).toBe("interrupted");
});

test("on open, nodes left running by a process that no longer exists are marked interrupted", () => {
  const store = openStore();
  store.createSession("s1");
  const writer = new SessionNodeWriter(store, "s1");
  writer.append({ id: "c", role: "code", name: "A.run", metadata: { status: "running", doc: "Runs." } });
  writer.flush();
  // Pretend the row was written by a dead process: pid 2^22+1 is above Linux's pid_max.
  const db = new Database(store.location);
  db.prepare("UPDATE rein_nodes SET owner_pid = ?").run(4194305);
  db.close();
  expect(openStore().readNodes("s1")[0]!.metadata).toEqual({ status: "interrupted", doc: "Runs." });
});

test("a corrupted file is a SessionStoreCorruptError naming the file, and is left untouched", () => {
  const path = join(directory, "broken.db");
  const bytes = Buffer.from("this is not an SQLite database, it is a text file ".repeat(100));
  writeFileSync(path, bytes);
  expect(() => openStore(path)).toThrow(SessionStoreCorruptError);
  expect(() => openStore(path)).toThrow(new RegExp(`'${path}' is not a readable SQLite database.*Nothing was changed`));
  expect(readFileSync(path).equals(bytes)).toBe(true);
  expect(SessionStoreError.isInstance(captured(() => openStore(path)))).toBe(true);
});

test("a foreign SQLite database is a ForeignDatabaseError listing its tables, and is left untouched", () => {
  const path = join(directory, "app.db");
  const db = new Database(path);
  db.exec("CREATE TABLE users (id INTEGER PRIMARY KEY, name TEXT); INSERT INTO users (name) VALUES ('ada');");
  db.close();
  const before = readFileSync(path);
  const error = captured(() => openStore(path));
  expect(error).toBeInstanceOf(ForeignDatabaseError);
  expect((error as ForeignDatabaseError).tables).toEqual(["users"]);
  expect((error as Error).message).toContain(`'${path}' is an SQLite database that was not created by Rein (tables: users)`);
  expect(readFileSync(path).equals(before)).toBe(true);
});

test("a newer schema version is a SessionSchemaVersionError; the data stays", () => {
  const store = openStore();
  store.createSession("s1");
  store.close();
  const db = new Database(store.location);
  db.prepare("INSERT INTO rein_migrations (version, name, applied_at) VALUES (99, 'future', 0)").run();
  db.close();
  const error = captured(() => openStore(store.location));
  expect(error).toBeInstanceOf(SessionSchemaVersionError);
  expect(error).toMatchObject({ foundVersion: 99, supportedVersion: 5, location: store.location });
  expect((error as Error).message).toMatch(/schema version 99, newer than version 5 .*upgrade @rein\/core/);
  const check = new Database(store.location);
  expect(check.prepare("SELECT id FROM rein_sessions").raw().all()).toEqual([["s1"]]);
  check.close();
});

function captured(work: () => unknown): unknown {
  try {
    work();
  } catch (error) {
    return error;
  }
  throw new Error("expected an error");
}

test("readNodes reads a session larger than one page (20,000 nodes) whole, in seq order, values intact", () => {
  const store = openStore();
  store.createSession("big");
  const count = 20_000 * 2 + 7;
  for (let start = 0; start < count; start += 5_000) {
    const operations = Array.from({ length: Math.min(5_000, count - start) }, (_, offset) => {
      const index = start + offset;
      return {
        kind: "append" as const,
        node: {
          id: `n${index}`,
          seq: index,
          createdAt: index,
          role: "llm" as const,
          name: "model",
          input: index % 3 === 0 ? undefined : index % 3 === 1 ? null : { index },
          output: index % 2 === 0 ? [{ type: "text", text: `t${index}` }] : undefined,
          caller: null,
          predecessor: index === 0 ? null : `n${index - 1}`,
          metadata: { index },
        },
      };
    });
    store.commit("big", operations);
  }
  const nodes = store.readNodes("big");
  expect(nodes).toHaveLength(count);
  expect(nodes.every((node, index) => node.id === `n${index}` && node.seq === index)).toBe(true);
  expect(nodes[3]).toEqual({
    id: "n3",
    seq: 3,
    createdAt: 3,
    role: "llm",
    name: "model",
    input: undefined,
    output: undefined,
    caller: null,
    predecessor: "n2",
    metadata: { index: 3 },
  });
  expect(nodes[20_002]).toMatchObject({ input: null, output: [{ type: "text", text: "t20002" }] });
  expect(nodes[20_003]).toMatchObject({ input: { index: 20_003 }, output: undefined });
  expect(nodes[count - 1]).toMatchObject({ id: `n${count - 1}`, input: null });
});

test("a session deleted and created again gets a fresh writer, not the deleted session's", () => {
  const store = openStore();
  store.createSession("s", {});
  const first = new SessionNodeWriter(store, "s");
  first.append({ id: "a", role: "code", name: "f" });
  first.append({ id: "b", role: "code", name: "f" });
  first.flush();
  store.deleteSession("s");
  store.createSession("s", {});
  const second = new SessionNodeWriter(store, "s");
  expect(second).not.toBe(first);
  second.append({ id: "c", role: "code", name: "f" });
  second.flush();
  expect(store.readNodes("s").map((node) => [node.id, node.seq])).toEqual([["c", 0]]);
});

describe("head() and the WAL stamp", () => {
  const top = (id: string, seq: number) => ({
    kind: "append" as const,
    node: { id, seq, createdAt: seq, role: "code" as const, name: "A.run", input: null, output: null, caller: null, predecessor: null, metadata: {} },
  });
  /** How often the store asked its worker for a head. */
  function headReads(store: SessionStore): () => number {
    const connection = (store as unknown as { connection: { call: (op: string, ...args: unknown[]) => unknown } }).connection;
    const call = connection.call.bind(connection);
    let reads = 0;
    connection.call = (op: string, ...args: unknown[]) => {
      if (op === "head") reads++;
      return call(op, ...args);
    };
    return () => reads;
  }

  it("is answered without a database read while nothing was committed; a commit by another connection is seen at once", () => {
    const one = openStore();
    const two = openStore(one.location);
    try {
      one.createSession("s1");
      one.commit("s1", [top("a", 0)]);
      const reads = headReads(one);
      expect(one.head("s1")).toBe("a");
      expect(one.head("s1")).toBe("a");
      expect(reads()).toBe(0);
      // Another connection (as another process would) moves the head.
      two.commit("s1", [top("b", 1)]);
      expect(one.head("s1")).toBe("b");
      expect(reads()).toBe(1);
      expect(one.head("s1")).toBe("b");
      expect(reads()).toBe(1);
      two.setHead("s1", "a");
      expect(one.head("s1")).toBe("a");
    } finally {
      two.close();
      one.close();
    }
  });
});
