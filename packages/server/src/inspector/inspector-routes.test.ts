import { InMemorySessionStore } from "rein";
import { createServer } from "../create-server";
import { InMemoryApiKeyStore } from "../auth";
import { entries } from "../__fixtures__/agents";

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
