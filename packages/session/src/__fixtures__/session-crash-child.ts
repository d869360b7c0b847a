/**
 * Child process for the crash tests. Usage: `<db path> <mode>`.
 * - `kill`: appends a running top-level call, then one llm node every few
 *   milliseconds, flushing each and printing `committed <id>` afterwards;
 *   runs until killed.
 * - `signal`: same, but with a writer that commits only on flush(); after
 *   `pending` nodes are queued (never flushed) it prints `queued <id>` and
 *   waits for SIGTERM / SIGINT.
 */
import { SessionNodeWriter, SessionStore } from "../index";

const [path, mode] = process.argv.slice(2);
const store = new SessionStore({ path: path! });
store.createSession("crash", { agentId: "Child" });
const writer = new SessionNodeWriter(store, "crash", { batching: mode === "signal" ? "manual" : "tick" });

writer.append({ id: "call", role: "code", name: "Child.run", metadata: { status: "running" } });
writer.flush();
process.stdout.write("committed call\n");

if (mode === "signal") {
  let predecessor: string | null = null;
  for (let index = 0; index < 5; index++) {
    const id = `pending-${index}`;
    writer.append({ id, role: "llm", name: "model", caller: "call", predecessor, output: index });
    predecessor = id;
  }
  process.stdout.write("queued pending-4\n");
  setInterval(() => undefined, 1000);
} else {
  let index = 0;
  let predecessor: string | null = null;
  setInterval(() => {
    const id = `llm-${index++}`;
    writer.append({ id, role: "llm", name: "model", caller: "call", predecessor, output: { index } });
    predecessor = id;
    writer.flush();
    process.stdout.write(`committed ${id}\n`);
  }, 2);
}
