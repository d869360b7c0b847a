/**
 * Child process for the several-processes test and the benchmark. Usage:
 * - `agent <connectionString> <schema> <session> <calls> <startAt>`: opens a
 *   store (several children open a fresh schema at once), creates the
 *   session unless another child did, waits until epoch ms `startAt`, then
 *   makes `calls` top-level agent calls (`Chat.say`, a model request, a
 *   tool call, another request) through `Context.forSession`. Prints one
 *   JSON line `{ calls, acknowledged: [ids of nodes whose commit returned] }`.
 * - `throughput <connectionString> <schema> <session> <commits> <nodes> <startAt>`:
 *   makes `commits` commits of `nodes` nodes with `commitWithRetry`; prints
 *   `{ nodes, start, end }` (epoch ms).
 */
import { Context, Runtime, SessionExistsError, type SessionWriteOperation } from "@rein/core";
import { Chat, lookupThenAnswer } from "../../../core/src/session/__fixtures__/chat-agent";
import { PostgresSessionStore } from "../postgres-session-store";

const [mode, connectionString, schema, sessionId, ...rest] = process.argv.slice(2) as [string, string, string, string, ...string[]];

function openStore(): PostgresSessionStore {
  const store = new PostgresSessionStore({ connectionString, schema, shutdownFlush: false, busyTimeoutMs: 30_000 });
  try {
    store.createSession(sessionId);
  } catch (error) {
    if (!SessionExistsError.isInstance(error)) throw error;
  }
  return store;
}

const waitUntil = (epochMs: number): Promise<void> => new Promise((done) => setTimeout(done, Math.max(0, epochMs - Date.now())));

async function main(): Promise<void> {
  if (mode === "agent") {
    const [calls, startAt] = rest as [string, string];
    const store = openStore();
    const acknowledged: string[] = [];
    const commit = store.commit.bind(store);
    store.commit = (id, operations) => {
      const result = commit(id, operations);
      for (const operation of operations) if (operation.kind === "append") acknowledged.push(operation.node.id);
      return result;
    };
    const chat = new Chat({ runtime: new Runtime({ provider: lookupThenAnswer() }), context: Context.forSession(store, sessionId) });
    await waitUntil(Number(startAt));
    for (let call = 0; call < Number(calls); call++) await chat.say(`call ${call}`);
    store.close();
    process.stdout.write(`${JSON.stringify({ calls: Number(calls), acknowledged })}\n`);
    return;
  }
  if (mode === "throughput") {
    const [commits, nodes, startAt] = rest as [string, string, string];
    const store = openStore();
    const tag = `p${process.pid}`;
    const batches = Array.from({ length: Number(commits) }, (_, commit) =>
      Array.from({ length: Number(nodes) }, (_, index): SessionWriteOperation => ({
        kind: "append",
        node: {
          id: `${tag}-${commit}-${index}`,
          seq: 0,
          createdAt: Date.now(),
          role: "code",
          name: "Child.call",
          input: { index },
          output: undefined,
          caller: index === 0 ? null : `${tag}-${commit}-0`,
          predecessor: null,
          metadata: { status: "completed" },
        },
      })),
    );
    await waitUntil(Number(startAt));
    const start = Date.now();
    for (const batch of batches) await store.commitWithRetry(sessionId, batch);
    const end = Date.now();
    store.close();
    process.stdout.write(`${JSON.stringify({ nodes: Number(commits) * Number(nodes), start, end })}\n`);
    return;
  }
  throw new Error(`unknown mode ${mode}`);
}

main().catch((error: unknown) => {
  process.stderr.write(`${(error as Error).stack ?? String(error)}\n`);
  process.exit(1);
});
