/**
 * The server the socket fuzz attacks (socket-fuzz.ts: fuzz.test.ts and
 * bench/server-fuzz.ts), run compiled in a child process so that its RSS is its
 * own and a crash shows as an exit: auth on with two keys, a SQLite session
 * store in the file STORE (as `rein serve` keeps one), small body limit and
 * short timeouts so the hostile requests resolve quickly. Prints one line
 * `listening <url> <key a> <key b>` once bound; SIGTERM closes it.
 */
import { Agent, Runtime, ScriptedProvider, SessionStore, currentSignal, step } from "rein";
import { InMemoryApiKeyStore } from "../auth";
import { createServer } from "../create-server";
import type { EntryInit } from "../entries";
import { serve } from "../serve";
import { WaitingProvider, waitingEntries } from "./waiting-provider";

/** Answers every request; records none (the fuzz sends thousands). */
const scripted = () => new ScriptedProvider([(request) => ({ text: `answer ${request.messages.length}`, usage: { inputTokens: 5, outputTokens: 2 } })], { whenExhausted: "repeat-last", recordRequests: false });

class FuzzResearcher extends Agent {
  static runtime = new Runtime({ provider: scripted() });
  async research(task: unknown): Promise<string> {
    return this.ask(String(task).slice(0, 200));
  }
  add(a: number, b: number): number {
    return a + b;
  }
}

class FuzzNapper extends Agent {
  async nap(ms: unknown): Promise<string> {
    const signal = currentSignal();
    await new Promise<void>((resolve) => {
      const timer = setTimeout(resolve, typeof ms === "number" && ms >= 0 && ms <= 200 ? ms : 10);
      signal?.addEventListener("abort", () => (clearTimeout(timer), resolve()), { once: true });
    });
    return "woke";
  }
}

class FuzzPipeline extends Agent {
  static methodOptions = { process: { resumable: true } };
  async process(text: unknown): Promise<string> {
    const upper = await step("upper", async (value: string) => value.toUpperCase(), String(text).slice(0, 100));
    return step("exclaim", async (value: string) => `${value}!`, upper);
  }
}

class FuzzThrower extends Agent {
  fail(): never {
    throw new Error("the entry failed");
  }
}

const entries = {
  research: [FuzzResearcher, "research"],
  add: [FuzzResearcher, "add"],
  stream: [({ onEvent }: EntryInit) => new FuzzResearcher({ runtime: new Runtime({ provider: scripted(), onEvent }) }), "research"],
  nap: [FuzzNapper, "nap"],
  pipeline: [FuzzPipeline, "process"],
  fail: [FuzzThrower, "fail"],
  ...waitingEntries(() => new WaitingProvider()),
} as const;

async function main(): Promise<void> {
  const keys = new InMemoryApiKeyStore();
  const a = await keys.create({ name: "a", scopes: ["run", "read"] });
  const b = await keys.create({ name: "b", scopes: ["run", "read", "mint"] });
  const store = new SessionStore({ path: process.env["STORE"]!, shutdownFlush: false });
  const app = createServer({ entries, store, auth: { keys }, mintRootBudget: true, maxBodyBytes: 16 * 1024, heartbeatMs: 50 });
  const server = await serve({ app, headersTimeoutMs: 400, bodyTimeoutMs: 400, idleTimeoutMs: 400, maxConnections: 256, warn: () => undefined });
  process.stdout.write(`listening ${server.url} ${a.key} ${b.key}\n`);
  process.on("SIGTERM", () => void server.close().then(() => (store.close(), process.exit(0))));
}

void main();
