/**
 * Child process for agent-session.test.ts: an agent records into a file
 * store and its model calls a tool; after a few requests the tool hangs so
 * the parent can SIGKILL the process mid-run. Prints "committed <id>" for
 * each llm node once a commit holding it has returned (the writer commits
 * its batch when the event loop turns, i.e. while the run waits for a tool
 * or the model) and "hanging" when stuck.
 */
import { Agent, Context, Runtime, ScriptedProvider, SessionNodeWriter, SessionStore } from "@rein/core";

const [path] = process.argv.slice(2);
const store = new SessionStore({ path });
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
