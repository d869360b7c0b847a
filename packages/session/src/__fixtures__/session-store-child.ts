/**
 * Child process for session-store-faults.test.ts. Usage: `<mode> ...args`.
 * - `append <db> <session> <calls> <tag>`: commits `calls` small batches
 *   (a top-level node and one node inside it) with `commitWithRetry`,
 *   printing `ack <id> <seq>` for each node once its commit returned.
 * - `cycles <db> <count>`: opens and closes a store on one file `count`
 *   times, printing `fds <n> <all> <threads>` after each close: the
 *   descriptors open on the file (and its -wal / -shm), all this process
 *   holds, and the threads it runs beyond those it ran before the first open
 *   (the closed store's thread is kept for the next store:
 *   sqlite-worker-pool.ts).
 * - `kept <dir>`: the threads stores leave behind (beyond those before the
 *   first open), printed as `<step> <threads>`: `turn` after each of three
 *   stores opened and closed in turn, `open` with three open at once,
 *   `closed` once they are closed and all but `KEPT_THREADS` ended,
 *   `expired` once the rest ended (each wait at most 30 s); and `fds <n>` open on the four files at the end.
 * - `fault <scenario> <dir> [uid]`: drops to `uid` when given, then runs a
 *   fault scenario and prints one JSON line `{ name, message, ... }`.
 * - `hold <db> <ms>`: a plain libsql connection takes the write lock, prints
 *   `locked`, holds it `ms` milliseconds, then commits and exits.
 * - `hold-until-told <db>`: as `hold`, but holds the lock until a line (or
 *   the end) arrives on stdin, then commits, prints `released` and exits.
 * - `signal <db>`: commits a running top-level node, queues two nodes in a
 *   manual writer (never flushed), prints `ready` and waits for a signal.
 * - `throughput <db> <session> <commits> <nodes> <startAt>`: waits until
 *   epoch ms `startAt`, then makes `commits` commits of `nodes` nodes with
 *   `commitWithRetry`; prints `done <nodes> <start> <end>` (epoch ms).
 */
import { readdirSync, readFileSync, readlinkSync } from "node:fs";
import { join } from "node:path";
import Database from "libsql";
import { SessionStore } from "../session-store";
import { KEPT_THREADS } from "../sqlite-worker-pool";
import { SessionNodeWriter } from "../session-node-writer";
import type { SessionWriteOperation } from "../session-store-like";

const [mode, ...args] = process.argv.slice(2);

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

/**
 * The threads this process runs now (the main one, V8's, libuv's, and the
 * workers'), less libsql's tokio runtime: it starts once per process, when
 * the native module first loads, and stays for the process's life.
 */
function threads(): number {
  return readdirSync("/proc/self/task").filter((task) => {
    try {
      return !readFileSync(`/proc/self/task/${task}/comm`, "utf8").startsWith("tokio-runtime");
    } catch {
      return false; /* ended meanwhile */
    }
  }).length;
}

function node(id: string, caller: string | null, predecessor: string | null): SessionWriteOperation {
  return {
    kind: "append",
    node: { id, seq: 0, createdAt: Date.now(), role: "code", name: "Child.call", input: { id }, output: undefined, caller, predecessor, metadata: { status: "completed" } },
  };
}

function report(error: unknown, extra: Record<string, unknown> = {}): void {
  const { name, message } = error as Error;
  process.stdout.write(`${JSON.stringify({ name, message, ...extra })}\n`);
}

async function main(): Promise<void> {
  if (mode === "append") {
    const [path, sessionId, calls, tag] = args as [string, string, string, string];
    const store = new SessionStore({ path, shutdownFlush: false, busyTimeoutMs: 20_000 });
    if (!store.hasSession(sessionId)) {
      try {
        store.createSession(sessionId);
      } catch {
        /* another child created it, or the lock was busy: it exists or the next check says so */
      }
    }
    let previous: string | null = null;
    for (let call = 0; call < Number(calls); call++) {
      const id = `${tag}-${call}`;
      const { seqs } = await store.commitWithRetry(sessionId, [node(id, null, previous), node(`${id}.inner`, id, null)]);
      for (const [nodeId, seq] of seqs) process.stdout.write(`ack ${nodeId} ${seq}\n`);
      previous = id;
    }
    store.close();
    return;
  }
  if (mode === "cycles") {
    const [path, count] = args as [string, string];
    const threadsBefore = threads();
    for (let cycle = 0; cycle < Number(count); cycle++) {
      const store = new SessionStore({ path, shutdownFlush: false });
      if (cycle === 0) store.createSession("s");
      store.commit("s", [node(`n${cycle}`, null, null)]);
      store.close();
      await new Promise((done) => setImmediate(done));
      process.stdout.write(`fds ${descriptorsOn(path)} ${readdirSync("/proc/self/fd").length} ${threads() - threadsBefore}\n`);
    }
    return;
  }
  if (mode === "kept") {
    const [dir] = args as [string];
    const threadsBefore = threads();
    const left = (step: string): void => void process.stdout.write(`${step} ${threads() - threadsBefore}\n`);
    const open = (name: string): SessionStore => {
      const store = new SessionStore({ path: join(dir, `${name}.db`), shutdownFlush: false });
      if (!store.hasSession("s")) store.createSession("s");
      store.commit("s", [node(`${name}${store.getSession("s").nodeCount}`, null, null)]);
      return store;
    };
    for (const name of ["a", "b", "c"]) {
      open(name).close();
      left("turn");
    }
    const together = ["d", "a", "b"].map(open);
    left("open");
    for (const store of together) store.close();
    // A thread beyond those kept is ended (terminate() is asynchronous); those kept stay for the keep period.
    const settled = async (count: number): Promise<void> => {
      const deadline = Date.now() + 30_000;
      while (threads() > threadsBefore + count && Date.now() < deadline) await new Promise((done) => setTimeout(done, 20));
    };
    await settled(KEPT_THREADS);
    left("closed");
    await settled(0);
    left("expired");
    process.stdout.write(`fds ${["a", "b", "c", "d"].reduce((sum, name) => sum + descriptorsOn(join(dir, `${name}.db`)), 0)}\n`);
    return;
  }
  if (mode === "signal") {
    const [path] = args as [string];
    const store = new SessionStore({ path, busyTimeoutMs: 10_000 });
    store.createSession("s");
    store.commit("s", [node("call", null, null)]);
    store.commit("s", [{ kind: "update", id: "call", fields: { metadata: { status: "running" } } }]);
    const writer = new SessionNodeWriter(store, "s", { batching: "manual" });
    writer.append({ id: "pending-0", role: "llm", name: "model", caller: "call" });
    writer.append({ id: "pending-1", role: "llm", name: "model", caller: "call", predecessor: "pending-0" });
    process.stdout.write("ready\n");
    setInterval(() => undefined, 1000);
    return;
  }
  if (mode === "throughput") {
    const [path, sessionId, commits, nodes, startAt] = args as [string, string, string, string, string];
    const store = new SessionStore({ path, shutdownFlush: false, busyTimeoutMs: 60_000 });
    const tag = `p${process.pid}`;
    const batches = Array.from({ length: Number(commits) }, (_, commit) =>
      Array.from({ length: Number(nodes) }, (_, index) => node(`${tag}-${commit}-${index}`, index === 0 ? null : `${tag}-${commit}-0`, null)),
    );
    await new Promise((done) => setTimeout(done, Math.max(0, Number(startAt) - Date.now())));
    const start = Date.now();
    for (const batch of batches) await store.commitWithRetry(sessionId, batch);
    const end = Date.now();
    store.close();
    process.stdout.write(`done ${Number(commits) * Number(nodes)} ${start} ${end}\n`);
    return;
  }
  if (mode === "hold") {
    const [path, ms] = args as [string, string];
    const db = new Database(path);
    db.exec("BEGIN IMMEDIATE");
    process.stdout.write("locked\n");
    setTimeout(() => {
      db.exec("COMMIT");
      process.stdout.write("released\n");
      process.exit(0);
    }, Number(ms));
    return;
  }
  if (mode === "hold-until-told") {
    const [path] = args as [string];
    const db = new Database(path);
    db.exec("BEGIN IMMEDIATE");
    process.stdout.write("locked\n");
    const release = (): void => {
      db.exec("COMMIT");
      process.stdout.write("released\n");
      process.exit(0);
    };
    process.stdin.once("data", release);
    process.stdin.once("end", release);
    return;
  }
  if (mode === "fault") {
    const [scenario, directory, uid] = args as [string, string, string | undefined];
    if (uid !== undefined) process.setuid!(Number(uid));
    await fault(scenario, directory);
    return;
  }
  throw new Error(`unknown mode ${mode}`);
}

/** Each scenario prints the error the user sees, and what happened after. */
async function fault(scenario: string, directory: string): Promise<void> {
  const path = join(directory, "sessions.db");
  if (scenario === "open") {
    // Open (or create) the store at <dir>/sessions.db and write one session.
    try {
      const store = new SessionStore({ path, shutdownFlush: false });
      store.createSession(`s${Date.now()}`);
      store.close();
      report({ name: "none", message: "" });
    } catch (error) {
      report(error, { target: (error as { target?: unknown }).target, code: (error as { code?: unknown }).code });
    }
    return;
  }
  if (scenario === "disk-full") {
    // <dir> is a small tmpfs. Fill it, fail a commit, free the space, retry the same batch.
    const { writeFileSync, rmSync } = await import("node:fs");
    // Ballast: freed at the end, it makes room for the batch that failed.
    writeFileSync(join(directory, "ballast"), Buffer.alloc(1024 * 1024));
    const store = new SessionStore({ path, shutdownFlush: false });
    store.createSession("s");
    const acknowledged: string[] = [];
    let batch = 0;
    let failure: unknown;
    let kept: SessionWriteOperation[] = [];
    const big = "x".repeat(64 * 1024);
    for (; batch < 10_000 && failure === undefined; batch++) {
      kept = Array.from({ length: 4 }, (_, index) => {
        const operation = node(`b${batch}.${index}`, null, null);
        (operation as { node: { input: unknown } }).node.input = big;
        return operation;
      });
      try {
        store.commit("s", kept);
        acknowledged.push(...kept.map((operation) => (operation as { node: { id: string } }).node.id));
      } catch (error) {
        failure = error;
      }
    }
    // Fill what is left so that even a small write fails, then free it all.
    let filler = 0;
    try {
      for (;;) writeFileSync(join(directory, `filler-${filler++}`), Buffer.alloc(4096));
    } catch {
      /* the disk is full */
    }
    let small: unknown;
    try {
      store.commit("s", [node("small", null, null)]);
    } catch (error) {
      small = error;
    }
    for (let index = 0; index < filler; index++) rmSync(join(directory, `filler-${index}`), { force: true });
    rmSync(join(directory, "ballast"), { force: true });
    // The same store instance, after space is freed: the failed batch commits now.
    store.commit("s", kept);
    acknowledged.push(...kept.map((operation) => (operation as { node: { id: string } }).node.id));
    store.close();
    const reopened = new SessionStore({ path, shutdownFlush: false });
    const stored = new Set(reopened.readNodes("s").map((stored) => stored.id));
    reopened.close();
    report(failure, {
      small: small === undefined ? null : (small as Error).name,
      acknowledged: acknowledged.length,
      lost: acknowledged.filter((id) => !stored.has(id)).length,
    });
    return;
  }
  throw new Error(`unknown scenario ${scenario}`);
}

main().catch((error: unknown) => {
  process.stderr.write(`${(error as Error).stack ?? String(error)}\n`);
  process.exit(1);
});
