import { createHash } from "node:crypto";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import fc from "fast-check";
import Database from "libsql";
import { InMemorySessionStore, SessionStore } from "rein";
import { createServer } from "./create-server";
import { InMemoryApiKeyStore, SqliteApiKeyStore, verifyApiKey, type ApiKeyScope, type ApiKeyStore } from "./auth";
import { stateOf } from "./server-state";
import { INTERNAL_OWNER, flightKey } from "./ownership";
import { entries, Pipeline, pipelineFaults } from "./__fixtures__/agents";
import { withUnsignedPolicyHeaders } from "./__fixtures__/unsigned-headers";

withUnsignedPolicyHeaders();

const allEntries = { ...entries, pipeline: [Pipeline, "process"] } as const;

function bearer(key: string): Record<string, string> {
  return { authorization: `Bearer ${key}` };
}

function runRequest(app: ReturnType<typeof createServer>, key: string | undefined, body: unknown, headers: Record<string, string> = {}) {
  return app.request("/v1/agent/run", {
    method: "POST",
    headers: { "content-type": "application/json", ...(key === undefined ? {} : bearer(key)), ...headers },
    body: JSON.stringify(body),
  });
}

async function keysWith(store: ApiKeyStore, specs: Record<string, ApiKeyScope[]>): Promise<Record<string, string>> {
  const keys: Record<string, string> = {};
  for (const [name, scopes] of Object.entries(specs)) keys[name] = (await store.create({ name, scopes })).key;
  return keys;
}

describe("API key stores", () => {
  let dir: string;
  beforeAll(() => (dir = mkdtempSync(join(tmpdir(), "rein-keys-"))));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it.each([
    ["in memory", () => new InMemoryApiKeyStore()],
    ["SQLite (:memory:)", () => new SqliteApiKeyStore({ path: ":memory:" })],
  ])("%s: create gives rein_<id>_<secret> once; list shows name, id, scopes; verify finds it; revoke removes it; names are unique", async (_, make) => {
    const store = make();
    const { key, record } = await store.create({ name: "ci", scopes: ["read", "run", "read"] });
    expect(key).toMatch(/^rein_[0-9a-f]{16}_[A-Za-z0-9_-]{43}$/);
    expect(key.slice(5, 21)).toBe(record.id);
    expect(record).toEqual({ id: record.id, name: "ci", scopes: ["run", "read"], createdAt: expect.any(Number) });
    expect(await store.list()).toEqual([record]);
    expect(await verifyApiKey(store, key)).toEqual(record);
    // Same id, another secret; a malformed key; the empty string.
    expect(await verifyApiKey(store, `${key.slice(0, 22)}${"A".repeat(43)}`)).toBeUndefined();
    expect(await verifyApiKey(store, "rein_nope")).toBeUndefined();
    expect(await verifyApiKey(store, "")).toBeUndefined();
    await expect(store.create({ name: "ci", scopes: ["run"] })).rejects.toThrow(/a key named 'ci' exists/);
    await expect(store.create({ name: "bad name!", scopes: ["run"] })).rejects.toThrow(TypeError);
    await expect(store.create({ name: "x", scopes: ["root" as ApiKeyScope] })).rejects.toThrow(/scopes must be/);
    expect(await store.revoke("ci")).toBe(true);
    expect(await store.revoke("ci")).toBe(false);
    expect(await verifyApiKey(store, key)).toBeUndefined();
    await store.close();
  });

  it("SQLite: only the key's SHA-256 is stored, in the session store's own file, beside its sessions (opened before or after it)", async () => {
    const path = join(dir, "sessions.db");
    const keys = new SqliteApiKeyStore({ path });
    const { key } = await keys.create({ name: "ci", scopes: ["run"] });
    // The session store opens the file the key store created (the session schema was put in first).
    const sessions = new SessionStore({ path, shutdownFlush: false });
    sessions.createSession("s1");
    sessions.close();
    await keys.close();
    const raw = new Database(path);
    const rows = raw.prepare("SELECT * FROM rein_api_keys").all() as Record<string, unknown>[];
    raw.close();
    expect(rows).toHaveLength(1);
    expect(rows[0]!["key_sha256"]).toBe(createHash("sha256").update(key).digest("hex"));
    expect(JSON.stringify(rows)).not.toContain(key.slice(22));
    expect(readFileSync(path).includes(Buffer.from(key.slice(22)))).toBe(false);
    const reopened = new SqliteApiKeyStore({ path });
    expect((await verifyApiKey(reopened, key))?.name).toBe("ci");
    await reopened.close();
  });
});

describe("createServer({ auth })", () => {
  const keys = new InMemoryApiKeyStore();
  const store = new InMemorySessionStore();
  const app = createServer({ entries: allEntries, store, auth: { keys }, mintRootBudget: true });
  let key: Record<string, string>;
  beforeAll(async () => {
    key = await keysWith(keys, { alice: ["run", "read"], bob: ["run", "read"], reader: ["read"], runner: ["run"], root: ["admin"] });
  });

  it("401 unauthorized (with WWW-Authenticate) without a key, with a wrong or malformed one, or after revoke; /healthz stays open", async () => {
    const cases: (Record<string, string> | undefined)[] = [undefined, { authorization: "Bearer rein_0000000000000000_" + "A".repeat(43) }, { authorization: "Basic abc" }, { authorization: "Bearer " }, { authorization: `Bearer ${"x".repeat(5000)}` }];
    for (const headers of cases) {
      for (const [path, init] of [["/v1/agent/run", { method: "POST", body: "{}" }], ["/v1/sessions/s1", {}], ["/v1/runs", {}], ["/v1/runs/some-run-id/cancel", { method: "POST" }], ["/v1/runs/some-run-id/resume", { method: "POST" }]] as const) {
        const response = await app.request(path, { ...init, headers: headers ?? {} });
        expect([path, response.status]).toEqual([path, 401]);
        expect(response.headers.get("www-authenticate")).toBe('Bearer realm="rein"');
        expect(await response.json()).toMatchObject({ error: { type: "unauthorized" } });
      }
    }
    expect((await app.request("/healthz")).status).toBe(200);
    const temporary = await keys.create({ name: "temporary", scopes: ["run"] });
    expect((await runRequest(app, temporary.key, { entry: "add", args: [1, 2] })).status).toBe(200);
    await keys.revoke("temporary");
    expect((await runRequest(app, temporary.key, { entry: "add", args: [1, 2] })).status).toBe(401);
  });

  it("403 forbidden for a missing scope: a read key cannot run or cancel, a run key cannot read", async () => {
    const run = await runRequest(app, key["reader"], { entry: "add", args: [1, 2] });
    expect(run.status).toBe(403);
    expect(await run.json()).toMatchObject({ error: { type: "forbidden", message: expect.stringContaining("'run'") } });
    expect((await app.request("/v1/runs/x-run-id-1/cancel", { method: "POST", headers: bearer(key["reader"]!) })).status).toBe(403);
    expect((await app.request("/v1/sessions/s1", { headers: bearer(key["runner"]!) })).status).toBe(403);
    expect((await app.request("/v1/runs", { headers: bearer(key["runner"]!) })).status).toBe(403);
  });

  it("a key's sessions are its own: another key gets 404 (session, graph) and the same name gives it a session of its own, with none of the first key's input", async () => {
    const first = await runRequest(app, key["alice"], { entry: "research", task: "task-alice-secret", sessionId: "shared-name" });
    expect(await first.json()).toMatchObject({ status: "completed", sessionId: "shared-name" });
    for (const path of ["/v1/sessions/shared-name", "/v1/sessions/shared-name/graph"]) {
      expect((await app.request(path, { headers: bearer(key["bob"]!) })).status).toBe(404);
      expect((await app.request(path, { headers: bearer(key["alice"]!) })).status).toBe(200);
    }
    const own = (await (await app.request("/v1/sessions/shared-name", { headers: bearer(key["alice"]!) })).json()) as { session: { id: string } };
    expect(own.session.id).toBe("shared-name");
    const second = await runRequest(app, key["bob"], { entry: "research", task: "task-bob", sessionId: "shared-name" });
    expect(await second.json()).toMatchObject({ status: "completed", sessionId: "shared-name" });
    const bobs = await (await app.request("/v1/sessions/shared-name", { headers: bearer(key["bob"]!) })).text();
    expect(bobs).toContain("task-bob");
    expect(bobs).not.toContain("task-alice-secret");
  });

  it("an admin key reads another key's session by its stored id and lists every run; others list only their own", async () => {
    const stored = store.listSessions().map((session) => session.id).find((id) => id.endsWith(".shared-name"))!;
    expect(stored).toMatch(/^k\.[0-9a-f]{16}\.shared-name$/);
    expect((await app.request(`/v1/sessions/${stored}`, { headers: bearer(key["root"]!) })).status).toBe(200);
    expect((await app.request(`/v1/sessions/${stored}`, { headers: bearer(key["bob"]!) })).status).toBe(404);
    for (const name of ["alice", "bob"]) await runRequest(app, key[name], { entry: "pipeline", args: [name], sessionId: "jobs" });
    const list = async (name: string) => ((await (await app.request("/v1/runs", { headers: bearer(key[name]!) })).json()) as { runs: { sessionId: string }[] }).runs.map((run) => run.sessionId);
    expect(await list("alice")).toEqual(["jobs"]);
    expect(await list("bob")).toEqual(["jobs"]);
    expect((await list("root")).sort()).toEqual([expect.stringMatching(/^k\.[0-9a-f]{16}\.jobs$/), expect.stringMatching(/^k\.[0-9a-f]{16}\.jobs$/)]);
  });

  it("runs in flight: another key cannot cancel (404); client-chosen run ids are scoped to their key; an admin can cancel any client run", async () => {
    const alice = runRequest(app, key["alice"], { entry: "sleep", args: [10_000] }, { "X-Run-Id": "chosen-run-id" });
    const bob = runRequest(app, key["bob"], { entry: "sleep", args: [10_000] }, { "X-Run-Id": "chosen-run-id" });
    const state = stateOf(app)!;
    while (state.runs.size < 2) await new Promise((r) => setTimeout(r, 5));
    // The same id twice for one key is still refused.
    expect((await runRequest(app, key["alice"], { entry: "add", args: [1, 1] }, { "X-Run-Id": "chosen-run-id" })).status).toBe(400);
    const reader = await app.request("/v1/runs/chosen-run-id/cancel", { method: "POST", headers: bearer(key["runner"]!) });
    expect(reader.status).toBe(404);
    expect((await app.request("/v1/runs/chosen-run-id/cancel", { method: "POST", headers: bearer(key["alice"]!) })).status).toBe(200);
    expect(await (await alice).json()).toMatchObject({ status: "cancelled" });
    expect(state.runs.size).toBe(1);
    expect((await app.request("/v1/runs/chosen-run-id/cancel", { method: "POST", headers: bearer(key["root"]!) })).status).toBe(200);
    expect(await (await bob).json()).toMatchObject({ status: "cancelled" });
  });

  it("the server's own runs (resume on start) cannot be cancelled by any client, an admin included", async () => {
    const controller = new AbortController();
    const state = stateOf(app)!;
    state.runs.set(flightKey(INTERNAL_OWNER, "resume-on-start"), controller);
    try {
      for (const name of ["root", "alice"]) {
        expect((await app.request("/v1/runs/resume-on-start/cancel", { method: "POST", headers: bearer(key[name]!) })).status).toBe(404);
      }
      expect(controller.signal.aborted).toBe(false);
    } finally {
      state.runs.delete(flightKey(INTERNAL_OWNER, "resume-on-start"));
    }
  });

  it("without X-Run-Id a run id is 128 random bits (32 hex characters)", async () => {
    const body = (await (await runRequest(app, key["alice"], { entry: "add", args: [1, 1] })).json()) as { runId: string };
    expect(body.runId).toMatch(/^[0-9a-f]{32}$/);
  });

  it("with a policy secret set, mintRootBudget mints only for a mint or admin key: another caller that drops its header gets 400", async () => {
    const mintKeys = await keysWith(keys, { minter: ["run", "mint"] });
    process.env.REIN_POLICY_SECRET = "server-secret";
    try {
      const dropped = await runRequest(app, key["alice"], { entry: "add", args: [1, 2] });
      expect(dropped.status).toBe(400);
      expect(await dropped.json()).toMatchObject({ error: { type: "missing_policy" } });
      expect(await (await runRequest(app, mintKeys["minter"], { entry: "add", args: [1, 2] })).json()).toMatchObject({ result: 3, budget: { depth: 5 } });
      expect((await runRequest(app, key["root"], { entry: "add", args: [1, 2] })).status).toBe(200);
    } finally {
      delete process.env.REIN_POLICY_SECRET;
    }
    // Without a secret every authenticated caller is minted a budget, as before.
    expect((await runRequest(app, key["alice"], { entry: "add", args: [1, 2] })).status).toBe(200);
  });

  it("a server without auth and a policy secret never mints", async () => {
    const open = createServer({ entries, mintRootBudget: true });
    process.env.REIN_POLICY_SECRET = "server-secret";
    try {
      expect((await runRequest(open, undefined, { entry: "add", args: [1, 2] })).status).toBe(400);
    } finally {
      delete process.env.REIN_POLICY_SECRET;
    }
  });

  it("createServer refuses an auth option without a key store", () => {
    expect(() => createServer({ entries, auth: {} as never })).toThrow(/auth must be \{ keys: ApiKeyStore \}/);
  });
});

describe("ownership, property", () => {
  it("random create/read/graph/list/cancel/resume by two keys: a key never sees or touches the other's runs and sessions", async () => {
    const keys = new InMemoryApiKeyStore();
    const store = new SessionStore({ path: ":memory:", shutdownFlush: false });
    const app = createServer({ entries: allEntries, store, auth: { keys }, mintRootBudget: true });
    const key = await keysWith(keys, { a: ["run", "read"], b: ["run", "read"] });
    const names = ["s1", "s2", "s3"];
    const owner = fc.constantFrom("a", "b");
    const command = fc.oneof(
      fc.record({ kind: fc.constant("create" as const), who: owner, name: fc.constantFrom(...names), fail: fc.boolean() }),
      fc.record({ kind: fc.constantFrom("read" as const, "graph" as const), who: owner, name: fc.constantFrom(...names) }),
      fc.record({ kind: fc.constant("list" as const), who: owner }),
      fc.record({ kind: fc.constantFrom("cancel" as const, "resume" as const), who: owner, pick: fc.nat() }),
    );
    try {
      await fc.assert(
        fc.asyncProperty(fc.array(command, { minLength: 1, maxLength: 12 }), async (commands) => {
          const created = { a: new Set<string>(), b: new Set<string>() };
          const runs: { who: "a" | "b"; runId: string; name: string }[] = [];
          const prefix = `p${Math.random().toString(36).slice(2, 8)}-`;
          for (const step of commands) {
            const headers = bearer(key[step.who]!);
            const other = step.who === "a" ? "b" : "a";
            if (step.kind === "create") {
              pipelineFaults.failSecondOnce = step.fail;
              const response = await runRequest(app, key[step.who], { entry: "pipeline", args: [`owner-${step.who}-${step.name}`], sessionId: prefix + step.name });
              expect(response.status).toBe(200);
              created[step.who].add(prefix + step.name);
              const listed = (await (await app.request("/v1/runs", { headers })).json()) as { runs: { runId: string; sessionId: string }[] };
              for (const run of listed.runs) if (!runs.some((known) => known.runId === run.runId)) runs.push({ who: step.who, runId: run.runId, name: run.sessionId });
            } else if (step.kind === "read" || step.kind === "graph") {
              const response = await app.request(`/v1/sessions/${prefix + step.name}${step.kind === "graph" ? "/graph" : ""}`, { headers });
              expect(response.status).toBe(created[step.who].has(prefix + step.name) ? 200 : 404);
              const text = await response.text();
              expect(text).not.toContain(`owner-${other}-`);
            } else if (step.kind === "list") {
              const listed = (await (await app.request("/v1/runs", { headers })).json()) as { runs: { runId: string; sessionId: string }[] };
              for (const run of listed.runs) expect(runs.find((known) => known.runId === run.runId)?.who ?? step.who).toBe(step.who);
              expect(JSON.stringify(listed)).not.toMatch(/k\.[0-9a-f]{16}\./);
            } else if ((step.kind === "cancel" || step.kind === "resume") && runs.length > 0) {
              const target = runs[step.pick % runs.length]!;
              const response = await app.request(`/v1/runs/${target.runId}/${step.kind}`, { method: "POST", headers });
              if (target.who !== step.who) expect(response.status).toBe(404);
              else expect(step.kind === "cancel" ? [404] : [200, 409]).toContain(response.status);
            }
          }
        }),
        { numRuns: 60 },
      );
    } finally {
      pipelineFaults.failSecondOnce = false;
      store.close();
    }
  }, 60_000);
});
