/**
 * Child process for the resumable-runs lease test. Usage:
 * - `start <connectionString> <schema> <runs>`: starts `runs` resumable runs
 *   on one session; each saves step "first", then blocks inside step
 *   "second". Prints `ready` once every run is blocked (the test then
 *   SIGKILLs it, leaving the runs `running` under a dead owner).
 * - `race <connectionString> <schema> <startAt>`: waits until epoch ms
 *   `startAt`, then calls `resumeInterrupted()`; prints one JSON line
 *   `{ calls: [run ids whose "second" ran here], resumed, leftAlone }`.
 */
import { Agent, Context, SessionExistsError, resumeInterrupted, step } from "@rein/core";
import { PostgresSessionStore } from "../postgres-session-store";

const [mode, connectionString, schema, arg] = process.argv.slice(2) as [string, string, string, string];
const calls: string[] = [];
let blocked = 0;
let total = 0;

class Worker extends Agent {
  static methodOptions = { job: { resumable: true } };

  async job(index: number): Promise<string> {
    const first = await step("first", async (i: number) => `first ${i}`, index);
    return step("second", async (text: string) => {
      calls.push(`${index}`);
      if (mode === "start") {
        if (++blocked === total) console.log("ready");
        await new Promise<never>(() => setInterval(() => undefined, 60_000));
      }
      return `${text} second`;
    }, first);
  }
}

async function main(): Promise<void> {
  const store = new PostgresSessionStore({ connectionString, schema, shutdownFlush: false, busyTimeoutMs: 30_000 });
  try {
    store.createSession("jobs");
  } catch (error) {
    if (!SessionExistsError.isInstance(error)) throw error;
  }
  const worker = new Worker({ context: Context.forSession(store, "jobs") });
  if (mode === "start") {
    total = Number(arg);
    for (let index = 0; index < total; index++) void worker.job(index);
    return;
  }
  await new Promise((done) => setTimeout(done, Math.max(0, Number(arg) - Date.now())));
  const report = await resumeInterrupted();
  console.log(
    JSON.stringify({
      calls,
      resumed: report.resumed.map(({ runId, status, result }) => ({ runId, status, result })),
      leftAlone: report.leftAlone.map(({ runId, reason }) => ({ runId, reason })),
    }),
  );
  store.close();
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
