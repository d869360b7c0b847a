/**
 * The asynchronous write path (`asyncWrites`): a writer commits its batches
 * with `commitAsync` on the store's pool, under the sync path's rules — seq
 * allocated in the transaction, an id taken by another node drops the
 * append (the first version stays), a lease moved to another epoch refuses
 * the fenced writes — and `flushAsync()` / `closeAsync()` wait for them.
 */
import { spawn } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Client } from "pg";
import { compileScript } from "../../session/src/__fixtures__/compiled-script";
import { LeaseLostError, SessionNodeWriter } from "@rein/session";
import { PostgresSessionStore } from "./postgres-session-store";
import { freshSchemaName, startEmbeddedPostgres, type EmbeddedPostgresServer } from "./__fixtures__/embedded-postgres";

let server: EmbeddedPostgresServer | undefined;
beforeAll(async () => {
  server = await startEmbeddedPostgres();
}, 300_000);
afterAll(async () => {
  await server?.stop();
});

const open = (schema: string, asyncWrites: boolean): PostgresSessionStore =>
  new PostgresSessionStore({ connectionString: server!.connectionString, schema, shutdownFlush: false, asyncWrites });

describe("PostgresSessionStore asyncWrites", () => {
  it("is off by default (commitAsync absent), and a bad value is a TypeError naming the option", () => {
    const schema = freshSchemaName();
    const store = open(schema, false);
    try {
      expect(store.commitAsync).toBeUndefined();
    } finally {
      store.close();
    }
    expect(() => new PostgresSessionStore({ connectionString: server!.connectionString, schema, asyncWrites: { poolSize: 0 } })).toThrow(
      /option 'asyncWrites' must be true, false or \{ poolSize: an integer from 1 to 100 \}/,
    );
  });

  it("a writer's appends and updates are committed by commitAsync; flushAsync waits; seqs follow the session's", async () => {
    const store = open(freshSchemaName(), true);
    try {
      store.createSession("s1");
      store.commit("s1", [{ kind: "append", node: { id: "a", seq: 0, createdAt: 1, role: "code", name: "sync", input: undefined, output: undefined, caller: null, predecessor: null, metadata: {} } }]);
      const writer = new SessionNodeWriter(store, "s1");
      let previous = "a";
      for (const id of ["b", "c", "d"]) {
        writer.append({ id, role: "code", name: "async", predecessor: previous, metadata: { status: "running" } });
        writer.update(id, { output: id.toUpperCase(), metadata: { status: "completed" } });
        previous = id;
      }
      await writer.flushAsync();
      expect(writer.pending).toBe(0);
      const nodes = store.readNodes("s1");
      expect(nodes.map((node) => [node.id, node.seq, node.output, node.metadata["status"]])).toEqual([
        ["a", 0, undefined, undefined],
        ["b", 1, "B", "completed"],
        ["c", 2, "C", "completed"],
        ["d", 3, "D", "completed"],
      ]);
      expect(store.head("s1")).toBe("d");
    } finally {
      await store.closeAsync();
    }
  });

  it("an id another store took drops this writer's append (the first version stays); the rest is stored", async () => {
    const schema = freshSchemaName();
    const other = open(schema, false);
    const store = open(schema, true);
    try {
      other.createSession("s1");
      const first = new SessionNodeWriter(other, "s1", { shared: false });
      first.append({ id: "x", role: "code", name: "theirs" });
      first.flush();
      const writer = new SessionNodeWriter(store, "s1");
      writer.append({ id: "x", role: "code", name: "mine" });
      writer.append({ id: "y", role: "code", name: "mine", predecessor: "x" });
      await writer.flushAsync();
      expect(store.readNodes("s1").map((node) => [node.id, node.name])).toEqual([
        ["x", "theirs"],
        ["y", "mine"],
      ]);
    } finally {
      await store.closeAsync();
      other.close();
    }
  });

  it("a write fenced by a lease that moved to another epoch is refused: flushAsync({ fence }) throws LeaseLostError, nothing of it is stored", async () => {
    const schema = freshSchemaName();
    const other = open(schema, false);
    const store = open(schema, true);
    try {
      store.createSession("s1");
      store.registerRun("r1", "s1", "run", 1);
      await new Promise((done) => setTimeout(done, 20));
      // The lease expired: another store takes the run, and its epoch moves from 1 to 2.
      expect(other.claimRun("r1", ["running"], 60_000)).toBe(true);
      const fence = { runId: "r1", epoch: 1 };
      const writer = new SessionNodeWriter(store, "s1");
      writer.append({ id: "fenced", role: "code", name: "step" }, { fence });
      writer.append({ id: "free", role: "code", name: "other" });
      await expect(writer.flushAsync({ fence })).rejects.toThrow(LeaseLostError);
      expect(store.readNodes("s1").map((node) => node.id)).toEqual(["free"]);
    } finally {
      await store.closeAsync();
      other.close();
    }
  });

  it("two stores claiming one expired run at once on their pools (asyncLeases.claimRun): exactly one gets it, at the next epoch", async () => {
    const schema = freshSchemaName();
    const a = open(schema, true);
    const b = open(schema, true);
    try {
      a.createSession("s");
      a.registerRun("r1", "s", "Job.run", 1);
      while (a.getRun("r1")!.leaseUntil! >= Date.now()) await new Promise((done) => setTimeout(done, 5));
      for (let round = 1; round <= 5; round++) {
        const claims = await Promise.all([a.asyncLeases!.claimRun!("r1", ["running", "interrupted"], 60_000, round), b.asyncLeases!.claimRun!("r1", ["running", "interrupted"], 60_000, round)]);
        expect(claims.filter(Boolean)).toHaveLength(1);
        expect(a.getRun("r1")).toMatchObject({ state: "running", leaseEpoch: round + 1 });
        // The winner lets it go (its lease over), for the next round.
        const winner = claims[0] ? a : b;
        await winner.asyncLeases!.releaseRun("r1", "interrupted", null, round + 1);
      }
    } finally {
      await a.closeAsync();
      await b.closeAsync();
    }
  });

  it("closeAsync commits what was written just before it, behind a commit in flight", async () => {
    const schema = freshSchemaName();
    const store = open(schema, true);
    store.createSession("s1");
    const writer = new SessionNodeWriter(store, "s1");
    writer.append({ id: "one", role: "code", name: "n" });
    writer.flush(); // starts the commit of "one"
    writer.append({ id: "two", role: "code", name: "n", predecessor: "one" });
    await store.closeAsync();
    const reader = open(schema, false);
    try {
      expect(reader.readNodes("s1").map((node) => node.id)).toEqual(["one", "two"]);
    } finally {
      reader.close();
    }
  });

  it("pool connections the database drops (a restart, a proxy's idle timeout) do not crash the process; the next commit connects again", async () => {
    const scratch = mkdtempSync(join(tmpdir(), "rein-dropped-pool-"));
    const admin = new Client({ connectionString: server!.connectionString });
    await admin.connect();
    try {
      const compiled = compileScript(join(__dirname, "__fixtures__", "dropped-pool-child.ts"), scratch);
      const child = spawn(process.execPath, [...compiled.nodeArgs, `${server!.connectionString}?application_name=rein-dropped-pool`, freshSchemaName()], {
        cwd: join(__dirname, "..", "..", ".."),
        env: { ...process.env, ...compiled.env },
      });
      let output = "";
      let errors = "";
      child.stdout.on("data", (chunk: Buffer) => (output += chunk.toString()));
      child.stderr.on("data", (chunk: Buffer) => (errors += chunk.toString()));
      const exited = new Promise<number | null>((done) => child.once("exit", (code) => done(code)));
      for (let tries = 0; !output.includes("ready"); tries++) {
        expect([tries, errors]).toEqual([expect.any(Number), ""]);
        expect(tries).toBeLessThan(1_200);
        await new Promise((done) => setTimeout(done, 50));
      }
      // The pool's connection is idle now; the database ends it (and the worker's, which the store makes again on its next call).
      const ended = await admin.query("SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE application_name = 'rein-dropped-pool'");
      expect(ended.rowCount).toBeGreaterThan(0);
      child.stdin.write("go\n");
      expect(await exited).toBe(0);
      expect(errors).toBe("");
      expect(output.trim().split("\n").pop()).toBe(JSON.stringify(["a", "b"]));
    } finally {
      await admin.end();
      rmSync(scratch, { recursive: true, force: true });
    }
  }, 120_000);
});
