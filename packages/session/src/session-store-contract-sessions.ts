/// <reference types="jest" />
/**
 * The store contract, part one: sessions, their ids and the typed errors
 * (see `session-store-contract.ts`).
 * @internal
 */
import { SessionNodeWriter } from "./session-node-writer";
import { SessionExistsError, SessionNodeNotFoundError, SessionNotFoundError, SessionStoreClosedError } from "./session-errors";
import { node, append, type StoreUnderTest } from "./session-store-contract-helpers";

/** Declares this part of the contract on the suite's store. @internal */
export function describeSessionsContract(context: StoreUnderTest): void {
  describe("sessions", () => {
    test("createSession, getSession, listSessions, deleteSession", () => {
      const created = context.store.createSession("s1", { agentId: "Researcher", title: "Find sources" });
      expect(created).toMatchObject({ id: "s1", agentId: "Researcher", title: "Find sources", headId: null, nodeCount: 0, lastSeq: -1 });
      context.store.createSession("s2");
      expect(context.store.getSession("s2")).toMatchObject({ agentId: null, title: null });
      expect(context.store.listSessions().map((session) => session.id).sort()).toEqual(["s1", "s2"]);
      context.store.deleteSession("s1");
      expect(context.store.hasSession("s1")).toBe(false);
      expect(context.store.listSessions().map((session) => session.id)).toEqual(["s2"]);
    });

    test("listSessions puts the most recently updated first", async () => {
      context.store.createSession("old");
      await new Promise((resolve) => setTimeout(resolve, 5));
      context.store.createSession("new");
      expect(context.store.listSessions().map((session) => session.id)).toEqual(["new", "old"]);
      await new Promise((resolve) => setTimeout(resolve, 5));
      context.store.commit("old", [append(node("a", 0))]);
      expect(context.store.listSessions().map((session) => session.id)).toEqual(["old", "new"]);
    });

    test("a deleted session takes its nodes with it; its id can be created again, empty", () => {
      context.store.createSession("s1");
      context.store.commit("s1", [append(node("a", 0))]);
      context.store.deleteSession("s1");
      context.store.createSession("s1");
      expect(context.store.getSession("s1")).toMatchObject({ nodeCount: 0, lastSeq: -1, headId: null });
      expect(context.store.hasNode("s1", "a")).toBe(false);
      expect(context.store.readNodes("s1")).toEqual([]);
    });

    test("getSession returns a snapshot: later commits and setHead leave it as it was", () => {
      context.store.createSession("s1");
      const before = context.store.getSession("s1");
      const writer = new SessionNodeWriter(context.store, "s1");
      writer.append({ id: "a", role: "user", name: "user" });
      writer.flush();
      expect(before).toMatchObject({ headId: null, lastSeq: -1, nodeCount: 0 });
      const after = context.store.getSession("s1");
      expect(after).toMatchObject({ headId: "a", lastSeq: 0, nodeCount: 1 });
      context.store.setHead("s1", null);
      expect(after.headId).toBe("a");
      expect(context.store.getSession("s1").headId).toBeNull();
    });
  });

  describe("session ids", () => {
    test("an id that is not a non-empty string of at most 256 characters is a TypeError saying what to use; nothing is created", () => {
      for (const id of [undefined, null, 42, "", "x".repeat(257), "x".repeat(1 << 20)]) {
        expect(() => context.store.createSession(id as string)).toThrow(TypeError);
      }
      expect(() => context.store.createSession("x".repeat(1 << 20))).toThrow(
        /createSession argument id: "x{10,}…" — a session id is at most 256 characters, this one has 1048576: use a shorter id \(a UUID, or a hash of a longer key\)/,
      );
      expect(() => context.store.createSession(undefined as unknown as string)).toThrow(/argument id: undefined — expected a non-empty string/);
      expect(context.store.listSessions()).toEqual([]);
      expect(context.store.createSession("y".repeat(256)).id).toBe("y".repeat(256));
    });

    test("any other text is an id stored and read back verbatim: __proto__, constructor, SQL-like text, quotes, unicode", () => {
      const ids = ["__proto__", "constructor", "toString", "'; DROP TABLE rein_sessions; --", 'a"b\\c', "%ZZ/../x", "セッション 🧵"];
      for (const id of ids) {
        expect(context.store.createSession(id).id).toBe(id);
        context.store.commit(id, [append(node(`n-${ids.indexOf(id)}`, 0, { input: id }))]);
      }
      expect(context.store.listSessions().map((session) => session.id).sort()).toEqual([...ids].sort());
      for (const [index, id] of ids.entries()) {
        expect(context.store.hasSession(id)).toBe(true);
        expect(context.store.getSession(id)).toMatchObject({ id, nodeCount: 1, headId: `n-${index}` });
        expect(context.store.readNodes(id).map((stored) => [stored.id, stored.input])).toEqual([[`n-${index}`, id]]);
      }
      expect(() => context.store.createSession("__proto__")).toThrow(SessionExistsError);
      context.store.deleteSession("__proto__");
      expect(context.store.hasSession("__proto__")).toBe(false);
      expect(context.store.hasSession("constructor")).toBe(true);
      expect(context.store.listSessions()).toHaveLength(ids.length - 1);
    });
  });

  describe("typed errors", () => {
    test("a missing session id is a SessionNotFoundError naming the id", () => {
      const calls: (() => unknown)[] = [
        () => context.store.getSession("nope"),
        () => context.store.deleteSession("nope"),
        () => context.store.head("nope"),
        () => context.store.setHead("nope", null),
        () => context.store.listBranches("nope"),
        () => context.store.readNodes("nope"),
        () => context.store.exportGraph("nope"),
        () => context.store.commit("nope", [append(node("x", 0))]),
        () => new SessionNodeWriter(context.store, "nope"),
      ];
      for (const call of calls) {
        let error: unknown;
        try {
          call();
        } catch (thrown) {
          error = thrown;
        }
        expect(SessionNotFoundError.isInstance(error)).toBe(true);
        expect((error as SessionNotFoundError).sessionId).toBe("nope");
      }
      expect(() => context.store.getSession("nope")).toThrow(/Session 'nope' does not exist .*createSession\('nope'/);
      expect(context.store.hasSession("nope")).toBe(false);
    });

    test("creating an existing session id throws SessionExistsError and keeps the session", () => {
      context.store.createSession("s1", { title: "first" });
      let error: unknown;
      try {
        context.store.createSession("s1", { title: "second" });
      } catch (thrown) {
        error = thrown;
      }
      expect(SessionExistsError.isInstance(error)).toBe(true);
      expect((error as SessionExistsError).sessionId).toBe("s1");
      expect(context.store.getSession("s1").title).toBe("first");
    });

    test("setHead to an unknown node throws SessionNodeNotFoundError; null starts a new root", () => {
      context.store.createSession("s1");
      expect(() => context.store.setHead("s1", "ghost")).toThrow(SessionNodeNotFoundError);
      context.store.setHead("s1", null);
      expect(context.store.head("s1")).toBeNull();
    });

    test("close commits pending writes; a closed context.store throws SessionStoreClosedError; close twice is fine", () => {
      context.store.createSession("s1");
      const writer = new SessionNodeWriter(context.store, "s1", { batching: "manual" });
      writer.append({ id: "a", role: "user", name: "user" });
      context.store.close();
      expect(writer.pending).toBe(0);
      const calls: (() => unknown)[] = [
        () => context.store.listSessions(),
        () => context.store.getSession("s1"),
        () => context.store.createSession("s2"),
        () => context.store.readNodes("s1"),
        () => context.store.commit("s1", [append(node("b", 1))]),
      ];
      for (const call of calls) expect(call).toThrow(SessionStoreClosedError);
      expect(() => context.store.close()).not.toThrow();
    });
  });
}
