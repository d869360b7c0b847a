import { ChatAgent, Context, ContinuationConsumedError, Runtime, ScriptedProvider, type ModelRequest, type TurnContinuation } from "@rein/core";
import { PostgresSessionStore } from "./postgres-session-store";
import { freshSchemaName, startEmbeddedPostgres, type EmbeddedPostgresServer } from "./__fixtures__/embedded-postgres";

let server: EmbeddedPostgresServer | undefined;
const opened: PostgresSessionStore[] = [];
beforeAll(async () => {
  server = await startEmbeddedPostgres();
}, 60_000);
afterAll(async () => {
  for (const store of opened.splice(0)) store.close();
  await server?.stop();
});

/** Two stores on one schema: their own connections and owner ids, as two processes have. */
function twoStores(): [PostgresSessionStore, PostgresSessionStore] {
  const schema = freshSchemaName();
  const open = (): PostgresSessionStore => {
    const store = new PostgresSessionStore({ connectionString: server!.connectionString, schema, shutdownFlush: false });
    opened.push(store);
    return store;
  };
  return [open(), open()];
}

it("consumeOnce: of two stores consuming one key, exactly one succeeds; unknown sessions are refused; deleting the session forgets its keys", () => {
  const [first, second] = twoStores();
  first.createSession("s");
  expect([first.consumeOnce("s", "k"), second.consumeOnce("s", "k"), first.consumeOnce("s", "k")]).toEqual([true, false, false]);
  expect(() => second.consumeOnce("missing", "k2")).toThrow(/missing/);
  expect(() => second.consumeOnce("s", "")).toThrow(TypeError);
  first.deleteSession("s");
  first.createSession("s");
  expect(second.consumeOnce("s", "k")).toBe(true);
});

let deployed = 0;
class Operator extends ChatAgent {
  static methodOptions = { deploy: { tool: true, description: "Deploy the service.", requiresApproval: true } };
  deploy(service: string): string {
    deployed++;
    return `${service} deployed`;
  }
}

it("a paused turn's continuation resumed through two stores at once (two processes' worth): the approved tool runs once, the other resume is a ContinuationConsumedError", async () => {
  const [first, second] = twoStores();
  first.createSession("ops");
  const pausing = new Operator({
    runtime: new Runtime({ provider: new ScriptedProvider([{ toolCalls: [{ name: "deploy", input: { service: "api" } }] }]) }),
    context: Context.forSession(first, "ops"),
  });
  const turn = await pausing.runTurn({ input: "Deploy api." });
  expect(turn.status).toBe("paused");
  const continuation = JSON.parse(JSON.stringify(turn.continuation)) as TurnContinuation;
  const answering = (): Runtime => new Runtime({ provider: new ScriptedProvider([(request: ModelRequest) => `done (${request.messages.length})`], { whenExhausted: "repeat-last" }) });
  // The second store's process knows nothing of the first's resume but what the database says.
  const results = await Promise.allSettled([
    new Operator({ runtime: answering(), context: Context.forSession(first, "ops") }).resumeTurn(continuation, { approve: true }),
    new Promise((resolve, reject) => {
      jest.isolateModules(() => {
        const core = require("@rein/core") as typeof import("@rein/core");
        class OtherOperator extends core.ChatAgent {
          static methodOptions = { deploy: { tool: true, description: "Deploy the service.", requiresApproval: true } };
          deploy(service: string): string {
            deployed++;
            return `${service} deployed`;
          }
        }
        new OtherOperator({ runtime: new core.Runtime({ provider: new core.ScriptedProvider(["done"], { whenExhausted: "repeat-last" }) }), context: core.Context.forSession(second as never, "ops") })
          .resumeTurn(continuation as never, { approve: true })
          .then(resolve, reject);
      });
    }),
  ]);
  expect(results.filter((result) => result.status === "fulfilled")).toHaveLength(1);
  const refused = results.find((result) => result.status === "rejected") as PromiseRejectedResult;
  expect(ContinuationConsumedError.isInstance(refused.reason)).toBe(true);
  expect(deployed).toBe(1);
});
