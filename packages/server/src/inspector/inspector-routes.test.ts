import { InMemorySessionStore } from "rein";
import { createServer } from "../create-server";
import { InMemoryApiKeyStore } from "../auth";
import { entries } from "../__fixtures__/agents";
import { createInspector } from "./create-inspector";

/** A store that says it is a Postgres database, as PostgresSessionStore.location does. */
function postgresLike(): InMemorySessionStore {
  const store = new InMemorySessionStore();
  Object.defineProperty(store, "location", { value: "postgres://db.internal.example:5432/app (schema rein)" });
  return store;
}

describe("the Inspector's config route", () => {
  it("a key that is not admin is told the store's kind only, never its host; an admin (or a server without auth) sees where it is", async () => {
    const keys = new InMemoryApiKeyStore();
    const reader = (await keys.create({ name: "reader", scopes: ["read"] })).key;
    const admin = (await keys.create({ name: "admin", scopes: ["admin"] })).key;
    const app = createServer({ entries, store: postgresLike(), auth: { keys }, inspector: true, onInternalError: () => undefined });
    const config = async (key: string) => (await app.request("/inspector/api/config", { headers: { authorization: `Bearer ${key}` } })).json() as Promise<{ store: string; readOnly: boolean }>;
    expect(await config(reader)).toMatchObject({ store: "Postgres store", readOnly: true });
    expect((await config(admin)).store).toBe("postgres://db.internal.example:5432/app (schema rein)");
    const open = createServer({ entries, store: postgresLike(), inspector: true });
    expect(((await (await open.request("/inspector/api/config")).json()) as { store: string }).store).toContain("db.internal.example");
  });
});

describe("the Inspector's session routes", () => {
  it("every session the list shows opens, whatever its id (rein run --session \"nightly run #3\", an e-mail, 129 characters); an id no store could hold is a 404", async () => {
    const store = new InMemorySessionStore();
    const ids = ["nightly run #3", "user@example.com", "a".repeat(129), "tenant/α β"];
    for (const id of ids) {
      store.createSession(id, { agentId: "Echo" });
      store.commit(id, [{ kind: "append", node: { id: `node-of-${ids.indexOf(id)}`, seq: 0, createdAt: 1, role: "code", name: "Echo.go", input: ["x"], output: "hi", caller: null, predecessor: null, metadata: { status: "completed" } } }]);
    }
    const app = createInspector({ store });
    const listed = ((await (await app.request("/inspector/api/sessions")).json()) as { sessions: { id: string }[] }).sessions.map((session) => session.id);
    expect(listed.sort()).toEqual([...ids].sort());
    for (const id of listed) {
      const response = await app.request(`/inspector/api/sessions/${encodeURIComponent(id)}/nodes`);
      expect({ id, status: response.status }).toEqual({ id, status: 200 });
      expect(await response.json()).toMatchObject({ sessionId: id, total: 1, nodes: [{ name: "Echo.go" }] });
    }
    expect((await app.request(`/inspector/api/sessions/${encodeURIComponent("tenant\u0000x")}/nodes`)).status).toBe(404);
    expect((await app.request(`/inspector/api/sessions/${"b".repeat(300)}/nodes`)).status).toBe(404);
  });
});
