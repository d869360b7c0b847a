import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { isConsumeOnceStore, type ConsumeOnceStore } from "./consume-once";
import { InMemorySessionStore } from "./in-memory-session-store";
import { SessionStore } from "./session-store";
import type { SessionStoreLike } from "./session-store-like";

let directory: string;
const opened: SessionStore[] = [];
beforeEach(() => {
  directory = mkdtempSync(join(tmpdir(), "rein-consume-"));
});
afterEach(() => {
  for (const store of opened.splice(0)) store.close();
  rmSync(directory, { recursive: true, force: true });
});

function sqlite(path = ":memory:"): SessionStore {
  const store = new SessionStore({ path, shutdownFlush: false });
  opened.push(store);
  return store;
}

const stores: [string, () => SessionStoreLike & ConsumeOnceStore][] = [
  ["in-memory", () => new InMemorySessionStore()],
  ["SQLite in memory", () => sqlite()],
  ["SQLite file", () => sqlite(join(directory, "s.db"))],
];

describe.each(stores)("consumeOnce on the %s store", (_name, make) => {
  it("the first consume of a key succeeds, every later one is refused; other keys are independent", () => {
    const store = make();
    expect(isConsumeOnceStore(store)).toBe(true);
    store.createSession("s");
    expect(store.consumeOnce("s", "continuation:a")).toBe(true);
    expect(store.consumeOnce("s", "continuation:a")).toBe(false);
    expect(store.consumeOnce("s", "continuation:b")).toBe(true);
  });

  it("refuses an unknown session and an empty key with typed errors, consuming nothing", () => {
    const store = make();
    store.createSession("s");
    expect(() => store.consumeOnce("missing", "k")).toThrow(/missing/);
    expect(() => store.consumeOnce("s", "")).toThrow(TypeError);
    expect(store.consumeOnce("s", "k")).toBe(true);
  });

  it("deleting the session forgets its keys", () => {
    const store = make();
    store.createSession("s");
    store.consumeOnce("s", "k");
    store.deleteSession("s");
    store.createSession("s");
    expect(store.consumeOnce("s", "k")).toBe(true);
  });
});

it("two SQLite stores on one file (as two processes): of both consuming one key, exactly one succeeds", () => {
  const path = join(directory, "shared.db");
  const first = sqlite(path);
  first.createSession("s");
  const second = sqlite(path);
  const outcomes = [first.consumeOnce("s", "k"), second.consumeOnce("s", "k"), first.consumeOnce("s", "k")];
  expect(outcomes).toEqual([true, false, false]);
  expect(second.consumeOnce("s", "other")).toBe(true);
});
