/**
 * A resumable run's save points on the asynchronous write path
 * (`asyncWrites`): an async run awaits each one, so what the run has saved
 * is in the database — seen through another connection — as soon as the
 * await returns: its node and registration before its body starts, each
 * finished step before the run goes on, an external step's start before
 * its operation begins, the mark of an approval before the approver is
 * asked, and the run's end before the method's promise resolves. (Before,
 * these points only started the commit, and another connection could find
 * the step still `running` or missing.)
 */
import { Agent, Context, Runtime, ScriptedProvider, step, type SessionNode } from "@rein/core";
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

/** What another connection sees of a node: its status, or "absent". */
function statusOf(nodes: readonly SessionNode[], match: (node: SessionNode) => boolean): unknown {
  const node = nodes.find(match);
  return node === undefined ? "absent" : node.metadata["status"];
}

test("an async resumable run's save points are stored when their await returns: run node, each step, an external step's start, the end", async () => {
  const schema = freshSchemaName();
  const store = open(schema, true);
  // Another process's view: its own connection, the synchronous path.
  const observer = open(schema, false);
  const seen: Record<string, unknown> = {};
  try {
    expect(store.commitAsync).toBeDefined();
    store.createSession("s");
    const stepStatus = (name: string): unknown => statusOf(observer.readNodes("s"), (node) => node.metadata["step"] === name);
    class Pipeline extends Agent {
      static methodOptions = { process: { resumable: true } };

      async process(input: string): Promise<string> {
        const runId = observer.listRuns().at(-1)?.runId;
        seen["run at start"] = runId === undefined ? "absent" : [statusOf(observer.readNodes("s"), (node) => node.id === runId), observer.getRun(runId)?.state];
        const fetched = await step("fetch", async (text: string) => `fetched ${text}`, input);
        seen["fetch after its await"] = stepStatus("fetch");
        const sent = await step({ name: "send", external: true }, async (text: string) => {
          seen["send when its operation begins"] = stepStatus("send");
          return `sent ${text}`;
        }, fetched);
        seen["send after its await"] = stepStatus("send");
        return sent;
      }
    }
    const agent = new Pipeline({ context: Context.forSession(store, "s") });

    expect(await agent.process("report")).toBe("sent fetched report");

    const runId = observer.listRuns().at(-1)!.runId;
    expect(seen).toEqual({
      "run at start": ["running", "running"],
      "fetch after its await": "completed",
      "send when its operation begins": "running",
      "send after its await": "completed",
    });
    expect(observer.readNodes("s").find((node) => node.id === runId)).toMatchObject({ output: "sent fetched report", metadata: { status: "completed" } });
    expect(observer.getRun(runId)).toMatchObject({ state: "completed" });
  } finally {
    observer.close();
    await store.closeAsync();
  }
});

test("a run waiting for a person's approval has its mark stored before the approver is asked", async () => {
  const schema = freshSchemaName();
  const store = open(schema, true);
  const observer = open(schema, false);
  let markSeen: unknown;
  try {
    store.createSession("s");
    class Publisher extends Agent {
      static methodOptions = {
        go: { resumable: true },
        publish: {
          tool: true,
          requiresApproval: true,
          description: "Publish a text.",
          parameters: { type: "object", properties: { text: { type: "string" } }, required: ["text"] },
        },
      };
      static runtime = new Runtime({ provider: new ScriptedProvider([{ toolCalls: [{ name: "publish", input: { text: "the draft" } }] }, "published"]) });

      publish(text: string): string {
        return `published ${text}`;
      }

      async go(): Promise<string> {
        return step("publish", async () => this.ask("Publish the draft."));
      }
    }
    const agent = new Publisher({
      context: Context.forSession(store, "s"),
      approveToolCall: () => {
        const runId = observer.listRuns().at(-1)!.runId;
        markSeen = observer.readNodes("s").find((node) => node.id === runId)!.metadata["awaitingApproval"];
        return true;
      },
    });

    expect(await agent.go()).toBe("published");

    expect(markSeen).toEqual({ toolName: "publish", args: { text: "the draft" } });
    const runId = observer.listRuns().at(-1)!.runId;
    expect(observer.readNodes("s").find((node) => node.id === runId)!.metadata).toMatchObject({ status: "completed", awaitingApproval: null });
  } finally {
    observer.close();
    await store.closeAsync();
  }
});
