/**
 * One of the server processes of spend-caps-cluster.test.ts, run as a tsx
 * child with DATABASE_URL and SCHEMA set: sessions in a
 * PostgresSessionStore and API keys (with their spend caps and spend) in a
 * PostgresApiKeyStore on the same database, auth on. Its one entry,
 * `notes`, makes three model requests of a slow fake model (priced, 500 +
 * 500 tokens each). Prints "listening <url>" once bound; SIGTERM stops it.
 */
import { Agent, Runtime, type ModelCallOptions, type ModelProvider, type ModelRequest, type ModelResponse, type ModelStreamEvent } from "rein";
import { PostgresApiKeyStore, PostgresSessionStore } from "@rein/store-postgres";
import { serve } from "../serve";
import type { EntryInit } from "../entries";

/** The usage each answer reports, and the price of the model: the test computes the cost cap's figures from them. */
export const CLUSTER_USAGE = { inputTokens: 500, outputTokens: 500 };
export const CLUSTER_PRICING = { slow: { inputPerMTok: 1, outputPerMTok: 2 } };

/** A model that answers after 5-40 ms (so runs of both processes overlap): a note on the first two turns, then the answer. */
class SlowModel implements ModelProvider {
  readonly specificationVersion = "rein-model-v1" as const;
  readonly providerId = "slow";
  readonly modelId = "slow";

  async complete(request: ModelRequest, options?: ModelCallOptions): Promise<ModelResponse> {
    await new Promise<void>((resolve, reject) => {
      const timer = setTimeout(resolve, 5 + Math.floor(Math.random() * 35));
      options?.signal?.addEventListener("abort", () => {
        clearTimeout(timer);
        reject(options.signal!.reason);
      }, { once: true });
    });
    const turns = request.messages.filter((message) => message.role === "assistant").length;
    const content: ModelResponse["content"] =
      turns < 2 ? [{ type: "tool_use", id: `call-${turns}`, name: "note", input: { text: `n${turns}` } }] : [{ type: "text", text: "done" }];
    return { content, stopReason: turns < 2 ? "tool_use" : "end_turn", usage: CLUSTER_USAGE, model: "slow" };
  }

  async *stream(request: ModelRequest, options?: ModelCallOptions): AsyncIterable<ModelStreamEvent> {
    yield { type: "response", response: await this.complete(request, options) };
  }
}

class Noter extends Agent {
  static methodOptions = { note: { tool: true, description: "Write a note." } };
  note(text: string): string {
    return `noted ${text}`;
  }
  async notes(task: string): Promise<string> {
    return this.ask(task);
  }
}

const entries = {
  notes: [({ onEvent }: EntryInit) => new Noter({ runtime: new Runtime({ provider: new SlowModel(), model: "slow", pricing: CLUSTER_PRICING, onEvent }) }), "notes"],
} as const;

if (require.main === module) {
  const connectionString = process.env["DATABASE_URL"]!;
  const schema = process.env["SCHEMA"]!;
  const store = new PostgresSessionStore({ connectionString, schema, shutdownFlush: false });
  const keys = new PostgresApiKeyStore({ connectionString, schema });
  void serve({ entries, store, auth: { keys }, mintRootBudget: true, onInternalError: (error) => process.stderr.write(`capped-server: ${String(error)}\n`) }).then((server) => {
    process.stdout.write(`listening ${server.url}\n`);
    process.once("SIGTERM", () => {
      void server.close().then(async () => {
        await keys.close();
        store.close();
        process.exit(0);
      });
    });
  });
}
