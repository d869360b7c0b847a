/**
 * Child process for postgres-crash-recovery.test.ts (as core's
 * agent-crash-child.ts, on a PostgresSessionStore). Usage:
 * `crash-child.ts <connectionString> <schema>`. An agent records into the
 * store and its model calls a tool; the fourth tool call hangs so the parent
 * can SIGKILL the process mid-run. Prints "committed <id>" for each llm node
 * once a commit holding it has returned (the writer commits its batch when
 * the event loop turns, i.e. while the run waits for a tool or the model)
 * and "hanging" when stuck.
 */
import { Agent, Context, Runtime, ScriptedProvider, SessionNodeWriter } from "@rein/core";
import { PostgresSessionStore } from "../postgres-session-store";

const [connectionString, schema] = process.argv.slice(2) as [string, string];
const store = new PostgresSessionStore({ connectionString, schema, shutdownFlush: false });
store.createSession("crawl", { agentId: "Crawler" });
const writer = new SessionNodeWriter(store, "crawl");
const commit = store.commit.bind(store);
store.commit = (sessionId, operations) => {
  const result = commit(sessionId, operations);
  for (const operation of operations) {
    if (operation.kind === "append" && operation.node.role === "llm") console.log(`committed ${operation.node.id}`);
  }
  return result;
};

class Crawler extends Agent {
  static methodOptions = { fetch_page: { tool: true, description: "Fetch one page." } };
  fetched = 0;
  async fetch_page(url: string): Promise<string> {
    if (++this.fetched === 4) {
      console.log("hanging");
      await new Promise(() => undefined);
    }
    return `contents of ${url}`;
  }
  async crawl(site: string): Promise<string> {
    return this.ask(`Crawl ${site}.`);
  }
}

const model = new ScriptedProvider(
  [(_request, index) => ({ toolCalls: [{ name: "fetch_page", input: { url: `https://example.test/${index}` } }] })],
  { whenExhausted: "repeat-last" },
);
const runtime = new Runtime({ provider: model });
void new Crawler({ runtime, context: new Context({}, { store: writer }) }).crawl("example.test");
// The store's worker does not hold the process open; the hung tool's promise does not either.
setInterval(() => undefined, 60_000);
