import { spawn, spawnSync, type ChildProcess } from "node:child_process";
import { chmodSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readlinkSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import Database from "libsql";
import { BUSY_ATTEMPT_MS, SessionStore } from "./session-store";
import type { SessionWriteOperation } from "./session-store-like";
import { KEPT_THREADS } from "./sqlite-worker-pool";
import {
  SessionNodeConflictError,
  SessionStoreBusyError,
  SessionStoreDirectoryError,
  SessionStoreError,
} from "./session-errors";
import { compileScript } from "./__fixtures__/compiled-script";

// Children run the child script compiled once by esbuild (the compiler tsx uses): a child started through tsx's hooks
// spent most of its CPU transforming sources, and this file starts a score of them.
const ROOT = resolve(__dirname, "../../..");
let NODE_ARGS: readonly string[];
let CHILD_ENV: NodeJS.ProcessEnv;
let compiledIn: string;
beforeAll(() => {
  // Readable by everyone: a fault scenario drops to uid 65534 before it loads the rest of what it needs.
  compiledIn = mkdtempSync(join(tmpdir(), "rein-faults-child-"));
  chmodSync(compiledIn, 0o755);
  const child = compileScript(join(__dirname, "__fixtures__", "session-store-child.ts"), compiledIn);
  NODE_ARGS = child.nodeArgs;
  CHILD_ENV = { ...process.env, ...child.env };
});
afterAll(() => rmSync(compiledIn, { recursive: true, force: true }));

let directory: string;
const open: SessionStore[] = [];
function openStore(options: { path?: string; busyTimeoutMs?: number } = {}): SessionStore {
  const store = new SessionStore({ path: join(directory, "sessions.db"), shutdownFlush: false, ...options });
  open.push(store);
  return store;
}

beforeEach(() => {
  directory = mkdtempSync(join(tmpdir(), "rein-faults-"));
});
afterEach(() => {
  for (const store of open.splice(0)) store.close();
  rmSync(directory, { recursive: true, force: true });
});

function append(
  id: string,
  caller: string | null = null,
  fields: Partial<{ name: string; createdAt: number; input: unknown; metadata: Record<string, unknown> }> = {},
): SessionWriteOperation {
  return {
    kind: "append",
    node: {
      id,
      seq: 0,
      createdAt: fields.createdAt ?? 1,
      role: "code",
      name: fields.name ?? "A.run",
      input: fields.input,
      output: undefined,
      caller,
      predecessor: null,
      metadata: fields.metadata ?? { status: "completed" },
    },
  };
}

/** Descriptors of this process open on the file or its -wal / -shm. */
function descriptorsOn(path: string): number {
  let count = 0;
  for (const fd of readdirSync("/proc/self/fd")) {
    try {
      if (readlinkSync(`/proc/self/fd/${fd}`).startsWith(path)) count++;
    } catch {
      /* closed meanwhile */
    }
  }
  return count;
}

function captured(work: () => unknown): unknown {
  try {
    work();
  } catch (error) {
    return error;
  }
  throw new Error("expected an error");
}

function startChild(
  args: string[],
  wrap?: (command: string[]) => string[],
  { stdin = false }: { stdin?: boolean } = {},
): { child: ChildProcess; output: Promise<{ lines: string[]; code: number | null; stderr: string }>; waitFor: (line: string) => Promise<void> } {
  const command = wrap === undefined ? [process.execPath, ...NODE_ARGS, ...args] : wrap([process.execPath, ...NODE_ARGS, ...args]);
  const child = spawn(command[0]!, command.slice(1), { cwd: ROOT, env: CHILD_ENV, stdio: [stdin ? "pipe" : "ignore", "pipe", "pipe"] });
  const lines: string[] = [];
  let buffered = "";
  let stderr = "";
  const waiters: (() => void)[] = [];
  child.stdout!.on("data", (chunk: Buffer) => {
    buffered += chunk.toString();
    const parts = buffered.split("\n");
    buffered = parts.pop()!;
    lines.push(...parts);
    for (const wake of waiters.splice(0)) wake();
  });
  child.stderr!.on("data", (chunk: Buffer) => (stderr += chunk.toString()));
  const output = new Promise<{ lines: string[]; code: number | null; stderr: string }>((done) =>
    // A child killed by a signal says which in stderr, so a failure names it.
    child.once("close", (code, signal) => done({ lines, code, stderr: signal === null ? stderr : `${stderr}[killed by ${signal}]` })),
  );
  const waitFor = (line: string): Promise<void> =>
    new Promise((done, fail) => {
      const check = (): void => {
        if (lines.includes(line)) done();
        else if (child.exitCode !== null) fail(new Error(`child exited early: ${stderr}`));
        else waiters.push(check);
      };
      child.once("exit", () => waiters.length > 0 && check());
      check();
    });
  return { child, output, waitFor };
}

/**
 * A child process that holds the write lock `holdMs`, returned once `store`
 * itself has found the lock held (a short attempt that failed busy): the
 * call a test makes right after starts while the lock is held, however
 * loaded the machine. A child whose hold ran out before that check is
 * replaced by a new one.
 */
async function lockedByAnotherProcess(store: SessionStore, holdMs = 1_000): Promise<ReturnType<typeof startChild>> {
  for (let attempt = 1; attempt <= 5; attempt++) {
    const holder = startChild(["hold", store.location, String(holdMs)]);
    await holder.waitFor("locked");
    const probe = `probe-${attempt}`;
    const error = (() => {
      try {
        store.createSession(probe);
        return undefined;
      } catch (failure) {
        return failure;
      }
    })();
    if (error instanceof SessionStoreBusyError) return holder;
    if (error !== undefined) throw error;
    // The lock was already given up: this machine is slower than holdMs.
    await holder.output;
    store.deleteSession(probe);
  }
  throw new Error(`five children in a row released the lock before this process could check it (held ${holdMs} ms each)`);
}

describe("a lock held by another connection", () => {
  test("createSession, setHead, commit and deleteSession fail with SessionStoreBusyError; the same store works once the lock is free", () => {
    const store = openStore();
    store.createSession("s1");
    store.commit("s1", [append("a")]);
    const other = new Database(store.location);
    other.exec("BEGIN IMMEDIATE");
    try {
      for (const work of [
        () => store.createSession("s2"),
        () => store.setHead("s1", null),
        () => store.commit("s1", [append("b")]),
        () => store.deleteSession("s1"),
        () => store.commit("s1", [{ kind: "update", id: "a", fields: { output: "x" } }]),
      ]) {
        const error = captured(work);
        expect(error).toBeInstanceOf(SessionStoreBusyError);
        expect(SessionStoreError.isInstance(error)).toBe(true);
        // One short attempt (BUSY_ATTEMPT_MS), not the whole busyTimeoutMs (5 s): the error reports the wait it was given.
        expect((error as SessionStoreBusyError).waitedMs).toBe(BUSY_ATTEMPT_MS);
        expect((error as Error).message).toMatch(/is locked by another connection: gave up after 20 ms\. Nothing was written; retry later/);
      }
      // Reads still work while another connection writes (WAL).
      expect(store.readNodes("s1").map((node) => node.id)).toEqual(["a"]);
    } finally {
      other.exec("COMMIT");
    }
    // Nothing was left half-done: no "SQL statements in progress", no open transaction.
    expect(store.commit("s1", [append("b"), append("b.1", "b")]).seqs).toEqual(new Map([["b", 1], ["b.1", 2]]));
    store.createSession("s2");
    store.setHead("s1", "a");
    expect(store.head("s1")).toBe("a");
    expect(store.readNodes("s1").map((node) => node.id)).toEqual(["a", "b", "b.1"]);
    expect(store.listSessions().map((session) => session.id).sort()).toEqual(["s1", "s2"]);
  });

  test("a store closed after a busy fault, without writing, releases the file at once", () => {
    const store = new SessionStore({ path: join(directory, "sessions.db"), shutdownFlush: false });
    const other = new Database(store.location);
    other.exec("BEGIN IMMEDIATE");
    expect(() => store.createSession("s1")).toThrow(SessionStoreBusyError);
    other.exec("COMMIT");
    other.close();
    store.close();
    expect(descriptorsOn(store.location)).toBe(0);
    // Leaving WAL mode needs the only connection: no other may be open.
    const check = new Database(store.location);
    try {
      expect(check.prepare("PRAGMA journal_mode = DELETE").raw().get()).toEqual(["delete"]);
      check.exec("BEGIN EXCLUSIVE");
      check.exec("COMMIT");
    } finally {
      check.close();
    }
  });
});

describe("waiting for a lock", () => {
  test("busyTimeoutMs must be a non-negative finite number: a TypeError at construction", () => {
    for (const busyTimeoutMs of [Number.NaN, -1, "5000", Infinity, null]) {
      expect(() => new SessionStore({ path: ":memory:", busyTimeoutMs: busyTimeoutMs as number })).toThrow(TypeError);
    }
    expect(() => new SessionStore({ path: ":memory:", busyTimeoutMs: Number.NaN })).toThrow(/busyTimeoutMs/);
  });

  test("a run's lease writes (register, claim, release) wait through a lock another process holds, up to busyTimeoutMs", async () => {
    const store = openStore({ busyTimeoutMs: 5_000 });
    store.createSession("s1");
    store.registerRun("run-1", "s1", "Job.run", 30_000);
    const holder = await lockedByAnotherProcess(store);
    // Started while the lock is held: given up after one 20 ms attempt, a finished run would stay "running" and be replayed later.
    store.releaseRun("run-1", "completed", null);
    expect(store.getRun("run-1")).toMatchObject({ state: "completed", owned: false });
    expect((await holder.output).code).toBe(0);
  }, 60_000);

  test("a store opened while another process holds the write lock on a new file waits for it and creates the schema; with a short busyTimeoutMs it fails with SessionStoreBusyError", async () => {
    // Several `rein run` processes started at once on one new store: the first creates the schema while the
    // others open the file. An open that gave up after one 20 ms attempt crashed them on a loaded machine.
    // A holder whose lock ran out before the impatient open tried (a machine slower than the hold) is replaced by
    // one that holds longer, on a new file.
    for (let attempt = 1; attempt <= 5; attempt++) {
      const path = join(directory, `new-${attempt}.db`);
      const holder = startChild(["hold", path, String(1500 * attempt)]);
      await holder.waitFor("locked");
      const impatient = (() => {
        try {
          return new SessionStore({ path, shutdownFlush: false, busyTimeoutMs: 0 });
        } catch (error) {
          return error;
        }
      })();
      if (impatient instanceof SessionStore) {
        impatient.close();
        await holder.output;
        continue;
      }
      expect(impatient).toBeInstanceOf(SessionStoreBusyError);
      // Started while the lock is held (the impatient open just found it held): this one waits for it.
      const store = openStore({ path, busyTimeoutMs: 60_000 });
      expect(store.createSession("s1").id).toBe("s1");
      expect((await holder.output).lines).toEqual(["locked", "released"]);
      return;
    }
    throw new Error("five holders in a row released the lock before this process could open the file");
  }, 60_000);

  test("a lock held by another process until it is told: the event loop keeps turning while commitWithRetry waits, which commits once the lock is free", async () => {
    const store = openStore({ busyTimeoutMs: 120_000 });
    store.createSession("s1");
    const holder = startChild(["hold-until-told", store.location], undefined, { stdin: true });
    await holder.waitFor("locked");
    // A synchronous call gives up after its one short attempt.
    const busy = captured(() => store.createSession("s2"));
    expect(busy).toBeInstanceOf(SessionStoreBusyError);
    expect((busy as SessionStoreBusyError).waitedMs).toBe(BUSY_ATTEMPT_MS);
    let settled = false;
    const committing = store.commitWithRetry("s1", [append("a")]).finally(() => (settled = true));
    committing.catch(() => undefined);
    // Timers and I/O run while the commit waits (the old store blocked the event loop for the whole wait).
    let ticks = 0;
    for (; ticks < 10; ticks++) await new Promise((done) => setTimeout(done, 10));
    expect(ticks).toBe(10);
    expect(settled).toBe(false);
    // Only this process's own event loop can tell the holder to let go.
    holder.child.stdin!.end("release\n");
    await holder.waitFor("released");
    const { seqs } = await committing;
    expect(seqs.get("a")).toBe(0);
    expect((await holder.output).code).toBe(0);
  }, 60_000);

  test("commitWithRetry gives up after busyTimeoutMs with SessionStoreBusyError; nothing is written", async () => {
    const store = openStore({ busyTimeoutMs: 300 });
    store.createSession("s1");
    const other = new Database(store.location);
    other.exec("BEGIN IMMEDIATE");
    // The lock is released only after commitWithRetry settled: a retry that never gave up would hang here.
    const error = await store.commitWithRetry("s1", [append("a")]).catch((failure: unknown) => failure);
    other.exec("COMMIT");
    expect(error).toBeInstanceOf(SessionStoreBusyError);
    expect((error as SessionStoreBusyError).waitedMs).toBeGreaterThanOrEqual(300);
    expect(store.readNodes("s1")).toEqual([]);
    expect((await store.commitWithRetry("s1", [append("a")])).seqs.get("a")).toBe(0);
  });
});

describe("close", () => {
  test("releases every descriptor (db, -wal, -shm) at once and leaves no -wal file", () => {
    const path = join(directory, "sessions.db");
    expect(descriptorsOn(path)).toBe(0);
    const store = new SessionStore({ path, shutdownFlush: false });
    store.createSession("s1");
    store.commit("s1", [append("a")]);
    expect(store.readNodes("s1")).toHaveLength(1);
    expect(descriptorsOn(path)).toBeGreaterThanOrEqual(1);
    store.close();
    expect(descriptorsOn(path)).toBe(0);
    expect(existsSync(`${path}-wal`)).toBe(false);
    expect(existsSync(`${path}-shm`)).toBe(false);
    const reopened = openStore({ path });
    expect(reopened.readNodes("s1").map((node) => node.id)).toEqual(["a"]);
  });

  // A leak of one descriptor per cycle shows in the second count after a few cycles; the volume (hundreds of cycles) is in bench/session-store-open-close.ts.
  test("20 open/close cycles of one file under `ulimit -n 64`: none left on the file after each close, one thread (kept for the next store, the same each time), and the process holds no more descriptors after the last cycle than after the first", async () => {
    const path = join(directory, "sessions.db");
    const { output } = startChild(["cycles", path, "20"], (command) => ["sh", "-c", 'ulimit -n 64 && exec "$@"', "sh", ...command]);
    const { lines, code, stderr } = await output;
    expect(stderr).toBe("");
    expect(code).toBe(0);
    expect(lines).toHaveLength(20);
    const counts = lines.map((line) => line.split(" "));
    // The closed store's thread is kept and serves the next open: one thread, never more.
    expect(new Set(counts.map(([label, onFile, , threadsLeft]) => `${label} ${onFile} ${threadsLeft}`))).toEqual(new Set(["fds 0 1"]));
    const all = counts.map(([, , total]) => Number(total));
    expect(all.every(Number.isInteger)).toBe(true);
    expect(all.at(-1)).toBeLessThanOrEqual(all[0]!);
    const store = openStore({ path });
    expect(store.getSession("s").nodeCount).toBe(20);
  }, 120_000);
});

describe("the threads closed stores leave (sqlite-worker-pool.ts)", () => {
  test("stores opened in turn share one kept thread; three at once take three, of which two are kept once closed, and those end after the keep period with no descriptor left on any file", async () => {
    const { output } = startChild(["kept", directory]);
    const { lines, code, stderr } = await output;
    expect(stderr).toBe("");
    expect(code).toBe(0);
    expect(lines).toEqual(["turn 1", "turn 1", "turn 1", "open 3", `closed ${KEPT_THREADS}`, "expired 0", "fds 0"]);
  }, 60_000);
});

describe("typed faults", () => {
  test("a parent path that is a file is a SessionStoreDirectoryError naming it (EEXIST and ENOTDIR)", () => {
    const blocker = join(directory, "data");
    writeFileSync(blocker, "not a directory");
    for (const path of [join(blocker, "sessions.db"), join(blocker, "deeper", "sessions.db")]) {
      const error = captured(() => new SessionStore({ path, shutdownFlush: false }));
      expect(error).toBeInstanceOf(SessionStoreDirectoryError);
      expect((error as SessionStoreDirectoryError).code).toMatch(/^(EEXIST|ENOTDIR)$/);
      expect((error as Error).message).toContain(`'${blocker}' is a file, not a directory`);
      expect((error as Error).message).toMatch(/move that file aside, or pass another \{ path \}/);
    }
  });

  // Permissions bind only an unprivileged user: as root, the child drops to
  // nobody (uid 65534) before it opens the store.
  const asRoot = typeof process.getuid === "function" && process.getuid() === 0;
  const NOBODY = "65534";

  function fault(scenario: string, dir: string, uid?: string): Promise<{ lines: string[]; code: number | null; stderr: string }> {
    return startChild(["fault", scenario, dir, ...(uid === undefined ? [] : [uid])]).output;
  }

  function parse(result: { lines: string[]; code: number | null; stderr: string }): Record<string, unknown> {
    expect(result.stderr).toBe("");
    expect(result.code).toBe(0);
    return JSON.parse(result.lines[result.lines.length - 1]!) as Record<string, unknown>;
  }

  test("read-only file, read-only directory and EACCES creating the directory say which, and what to do", async () => {
    if (!asRoot) {
      console.warn("skipped: needs root to drop to uid 65534 for the permission faults");
      return;
    }
    // A world-writable place nobody can use; inside it, a file and a directory root owns.
    chmodSync(directory, 0o777);
    const seed = (dir: string): void => {
      mkdirSync(dir, { recursive: true });
      const store = new SessionStore({ path: join(dir, "sessions.db"), shutdownFlush: false });
      store.createSession("seed");
      store.close();
    };
    const readOnlyFile = join(directory, "ro-file");
    seed(readOnlyFile);
    chmodSync(readOnlyFile, 0o777);
    chmodSync(join(readOnlyFile, "sessions.db"), 0o644);
    const readOnlyDirectory = join(directory, "ro-dir");
    seed(readOnlyDirectory);
    chmodSync(join(readOnlyDirectory, "sessions.db"), 0o666);
    chmodSync(readOnlyDirectory, 0o755);
    const closed = join(directory, "closed");
    mkdirSync(closed, { mode: 0o755 });

    const [file, dir, create] = await Promise.all([
      fault("open", readOnlyFile, NOBODY),
      fault("open", readOnlyDirectory, NOBODY),
      fault("open", join(closed, "sub"), NOBODY),
    ]);
    expect(parse(file)).toMatchObject({ name: "SessionStoreReadOnlyError", target: "file" });
    expect(parse(file)["message"]).toMatch(/the file '.*ro-file\/sessions\.db' is read-only for this process .*make the file writable by user .*65534/);
    expect(parse(dir)).toMatchObject({ name: "SessionStoreReadOnlyError", target: "directory" });
    expect(parse(dir)["message"]).toMatch(/its directory '.*ro-dir' is read-only .*make the directory writable/);
    expect(parse(create)).toMatchObject({ name: "SessionStoreDirectoryError", code: "EACCES" });
    expect(parse(create)["message"]).toMatch(/this process may not create '.*closed\/sub'/);
  }, 60_000);

  test("a full disk is a SessionStoreDiskFullError; once space is freed the kept batch commits on the same store and nothing acknowledged is lost", async () => {
    const probe = spawnSync("unshare", ["-m", "sh", "-c", `mount -t tmpfs -o size=1m tmpfs "${directory}"`], { encoding: "utf8" });
    if (probe.status !== 0) {
      console.warn(`skipped: cannot mount a small tmpfs (unshare -m + mount): ${probe.stderr.trim()}`);
      return;
    }
    const result = await startChild(["fault", "disk-full", directory], (command) => [
      "unshare",
      "-m",
      "sh",
      "-c",
      `mount -t tmpfs -o size=4m tmpfs "${directory}" && exec "$@"`,
      "sh",
      ...command,
    ]).output;
    const seen = parse(result);
    expect(seen).toMatchObject({ name: "SessionStoreDiskFullError", lost: 0 });
    // A small commit on the still-full disk may fit in space SQLite already
    // holds, or fail the same typed way; never "cannot rollback".
    expect([null, "SessionStoreDiskFullError"]).toContain(seen["small"]);
    expect(seen["message"]).toMatch(/the disk is full\. Nothing of this commit was stored and the batch is kept: free space/);
    expect(seen["acknowledged"]).toBeGreaterThan(4);
  }, 60_000);
});

describe("many processes, one session", () => {
  test("3 processes appending concurrently: every seq unique and contiguous, every acknowledged node stored with its seq", async () => {
    const path = join(directory, "sessions.db");
    openStore({ path }).createSession("shared");
    const children = ["p0", "p1", "p2"].map((tag) => startChild(["append", path, "shared", "40", tag]).output);
    const results = await Promise.all(children);
    const acknowledged = new Map<string, number>();
    for (const { lines, code, stderr } of results) {
      expect(stderr).toBe("");
      expect(code).toBe(0);
      for (const line of lines) {
        const [, id, seq] = line.split(" ");
        acknowledged.set(id!, Number(seq));
      }
    }
    expect(acknowledged.size).toBe(240);
    const nodes = openStore({ path }).readNodes("shared");
    expect(nodes).toHaveLength(240);
    expect(nodes.map((node) => node.seq)).toEqual(Array.from({ length: 240 }, (_, index) => index));
    for (const node of nodes) expect(acknowledged.get(node.id)).toBe(node.seq);
    expect(openStore({ path }).getSession("shared").lastSeq).toBe(239);
  }, 90_000);

  test("seq is allocated inside the transaction: the seq a writer proposes is only a hint", () => {
    const first = openStore();
    const second = openStore();
    first.createSession("s1");
    // Both propose seq 0.
    expect(first.commit("s1", [append("a")]).seqs).toEqual(new Map([["a", 0]]));
    expect(second.commit("s1", [append("b"), append("c", "b")]).seqs).toEqual(new Map([["b", 1], ["c", 2]]));
    expect(first.readNodes("s1").map((node) => [node.id, node.seq])).toEqual([["a", 0], ["b", 1], ["c", 2]]);
    expect(first.head("s1")).toBe("b");
  });
});

describe("node ids", () => {
  test("another node under a taken id is a SessionNodeConflictError and nothing of the commit is stored; the same node sent again is harmless", () => {
    const store = openStore();
    store.createSession("s1");
    store.commit("s1", [append("a", null, { input: "first" })]);
    const error = captured(() => store.commit("s1", [append("b"), append("a", null, { name: "B.other", createdAt: 2 })]));
    expect(error).toBeInstanceOf(SessionNodeConflictError);
    expect(error).toMatchObject({ sessionId: "s1", nodeId: "a" });
    expect((error as Error).message).toMatch(/Node id 'a' is already taken by another node in session 's1'.*Nothing of this commit was stored/);
    expect(store.readNodes("s1").map((node) => node.id)).toEqual(["a"]);
    // A retry of a commit whose reply was lost: same node, no error, first version stays.
    expect(store.commit("s1", [append("a", null, { input: "again" }), append("b")]).seqs).toEqual(new Map([["b", 1]]));
    expect(store.readNodes("s1").map((node) => [node.id, node.seq, node.input])).toEqual([["a", 0, "first"], ["b", 1, undefined]]);
  });

  test("createSession(undefined) and createSession(42) are TypeErrors; hasSession(42) too; no row is written", () => {
    const store = openStore();
    expect(() => store.createSession(undefined as unknown as string)).toThrow(TypeError);
    expect(() => store.createSession(42 as unknown as string)).toThrow(TypeError);
    expect(() => store.createSession(42 as unknown as string)).toThrow(/id/);
    expect(() => store.hasSession(42 as unknown as string)).toThrow(TypeError);
    expect(store.listSessions()).toEqual([]);
    const check = new Database(store.location);
    try {
      expect(check.prepare("SELECT count(*) FROM rein_sessions").raw().get()).toEqual([0]);
    } finally {
      check.close();
    }
  });
});

test("a store refused at open (foreign database) holds no descriptor on the file afterwards", () => {
  const path = join(directory, "app.db");
  const db = new Database(path);
  db.exec("CREATE TABLE users (id INTEGER PRIMARY KEY)");
  db.close();
  const before = descriptorsOn(path);
  expect(() => new SessionStore({ path, shutdownFlush: false })).toThrow(/not created by Rein/);
  expect(descriptorsOn(path)).toBe(before);
});

test("close waits out a short lock rather than drop what it must write, then releases the file", async () => {
  const store = new SessionStore({ path: join(directory, "sessions.db"), shutdownFlush: false, busyTimeoutMs: 5_000 });
  store.createSession("s1");
  store.commit("s1", [append("c", null, { metadata: { status: "running" } })]);
  const holder = await lockedByAnotherProcess(store);
  // Started while the lock is held: a close that gave up would leave the call "running".
  store.close();
  expect(descriptorsOn(store.location)).toBe(0);
  await holder.output;
  const check = openStore();
  expect(check.readNodes("s1")[0]!.metadata["status"]).toBe("interrupted");
}, 60_000); // sized for a loaded 2-core machine

test("close right after commitWithRetry: the commit is settled with its real outcome, not reported lost", async () => {
  const store = new SessionStore({ path: join(directory, "sessions.db"), shutdownFlush: false });
  store.createSession("s1");
  const pending = store.commitWithRetry("s1", [append("a")]);
  store.close();
  await expect(pending).resolves.toEqual({ seqs: new Map([["a", 0]]) });
  expect(openStore().readNodes("s1").map((node) => node.id)).toEqual(["a"]);
});

test("SIGTERM while another connection holds the lock: the shutdown flush waits for it, commits the pending batch and interrupts the running call", async () => {
  const path = join(directory, "sessions.db");
  const { child, waitFor, output } = startChild(["signal", path]);
  await waitFor("ready");
  const other = new Database(path);
  other.exec("BEGIN IMMEDIATE");
  setTimeout(() => other.exec("COMMIT"), 300);
  child.kill("SIGTERM");
  await output;
  expect(child.signalCode).toBe("SIGTERM");
  const check = new Database(path);
  try {
    expect(check.prepare("SELECT id, status FROM rein_nodes ORDER BY seq").raw().all()).toEqual([
      ["call", "interrupted"],
      ["pending-0", null],
      ["pending-1", null],
    ]);
  } finally {
    check.close();
  }
}, 60_000); // sized for a loaded 2-core machine
