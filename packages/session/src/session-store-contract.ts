/// <reference types="jest" />
/**
 * The contract every session store keeps, as one jest suite:
 * `describeSessionStoreContract(name, makeStore)` runs it against a store
 * made fresh for each test. The in-memory and SQLite stores run it
 * (`session-store-like.test.ts`); a store of another package runs it from
 * its own test file (docs/writing-a-session-store.md):
 *
 * ```ts
 * import { describeSessionStoreContract } from "@rein/session";
 * describeSessionStoreContract("PostgresSessionStore", () => new PostgresSessionStore({ pool, schema: freshSchema() }));
 * ```
 *
 * It calls jest's globals (`describe`, `test`, `expect`, `beforeEach`,
 * `afterEach`) when called, so call it from a test file only; loading the
 * module outside a test costs nothing.
 */
import { SessionNodeWriter } from "./session-node-writer";
import type { SessionStoreLike } from "./session-store-like";
import type { StoreUnderTest } from "./session-store-contract-helpers";
import { describeSessionsContract } from "./session-store-contract-sessions";
import { describeWritesContract } from "./session-store-contract-writes";
import { describeLeasesContract } from "./session-store-contract-leases";

/**
 * Declares the store contract suite for `makeStore`, which returns a new,
 * empty store each time (closed by the suite after each test). Call it at
 * the top level of a jest test file.
 *
 * @example
 * ```ts
 * import { describeSessionStoreContract } from "@rein/session";
 * describeSessionStoreContract("MyStore", () => new MyStore({ path: freshPath() }));
 * ```
 */
export function describeSessionStoreContract(name: string, makeStore: () => SessionStoreLike | Promise<SessionStoreLike>): void {
  describe(`${name} keeps the session store contract`, () => {
    let store: SessionStoreLike;
    beforeEach(async () => {
      store = await makeStore();
    });
    afterEach(() => store.close());

    // The parts in their own files read the store of the current test through this.
    const context: StoreUnderTest = {
      get store() {
        return store;
      },
    };
    describeSessionsContract(context);
    describeWritesContract(context);
    describeLeasesContract(context);

    describe("inspection", () => {
      test("exportGraph renders the mermaid flowchart of a small known run", () => {
        store.createSession("s1");
        const writer = new SessionNodeWriter(store, "s1");
        writer.append({ id: "u1", role: "user", name: "user", input: "Find sources" });
        writer.append({ id: "c1", role: "code", name: "Researcher.research", predecessor: "u1", metadata: { status: "running" } });
        writer.append({ id: "l1", role: "llm", name: "model-a", caller: "c1" });
        writer.append({ id: "c2", role: "code", name: "Wiki.search", caller: "c1", predecessor: "l1", metadata: { status: "completed" } });
        writer.append({ id: "l2", role: "llm", name: "model-a", caller: "c1", predecessor: "c2" });
        writer.update("c1", { metadata: { status: "completed" } });
        writer.flush();
        expect(store.exportGraph("s1", { format: "mermaid" })).toBe(
          [
            "flowchart TD",
            '  n0["user: user"]',
            '  n1["code: Researcher.research (completed)"]',
            '  n2["llm: model-a"]',
            '  n3["code: Wiki.search (completed)"]',
            '  n4["llm: model-a"]',
            "  n0 --> n1",
            "  n1 -.-> n2",
            "  n1 -.-> n3",
            "  n2 --> n3",
            "  n1 -.-> n4",
            "  n3 --> n4",
            "  classDef head stroke-width:3px",
            "  class n1 head",
            "",
          ].join("\n"),
        );
        const dot = store.exportGraph("s1", { format: "dot" });
        expect(dot).toContain('n1 [label="code: Researcher.research (completed)", penwidth=3];');
        expect(dot).toContain("n0 -> n1;");
        expect(dot).toContain("n1 -> n2 [style=dashed];");
        const json = JSON.parse(store.exportGraph("s1", { format: "json" })) as { session: { id: string }; nodes: unknown[] };
        expect(json.session.id).toBe("s1");
        expect(json.nodes).toHaveLength(5);
      });

      test("interruptRunning marks the store's running nodes interrupted", () => {
        store.createSession("s1");
        const writer = new SessionNodeWriter(store, "s1");
        writer.append({ id: "c", role: "code", name: "A.run", metadata: { status: "running" } });
        writer.append({ id: "d", role: "code", name: "A.run", metadata: { status: "completed" } });
        writer.flush();
        expect(store.interruptRunning()).toBe(1);
        expect(store.readNodes("s1").map((stored) => stored.metadata["status"])).toEqual(["interrupted", "completed"]);
        expect(store.interruptRunning()).toBe(0);
      });

      test("store.flush() commits every writer with a pending batch", () => {
        store.createSession("s1");
        store.createSession("s2");
        const one = new SessionNodeWriter(store, "s1", { batching: "manual" });
        const two = new SessionNodeWriter(store, "s2", { batching: "manual" });
        one.append({ id: "a", role: "user", name: "user" });
        two.append({ id: "b", role: "user", name: "user" });
        store.flush();
        expect(store.getSession("s1").nodeCount + store.getSession("s2").nodeCount).toBe(2);
        expect(one.pending + two.pending).toBe(0);
      });
    });
  });
}
