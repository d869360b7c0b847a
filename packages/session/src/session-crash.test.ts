import { spawn, type ChildProcess } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import Database from "libsql";
import { SessionStore } from "./session-store";

// The child runs from TypeScript source through tsx's CommonJS hook, with
// the test tsconfig's paths so `@rein/guard` resolves to source: no build.
const ROOT = resolve(__dirname, "../../..");
const CHILD = join(__dirname, "__fixtures__", "session-crash-child.ts");

let directory: string;
beforeEach(() => {
  directory = mkdtempSync(join(tmpdir(), "rein-crash-"));
});
afterEach(() => rmSync(directory, { recursive: true, force: true }));

function startChild(path: string, mode: "kill" | "signal"): { child: ChildProcess; lines: string[]; waitFor: (line: RegExp, count?: number) => Promise<void> } {
  const child = spawn(process.execPath, ["--require", require.resolve("tsx/cjs"), CHILD, path, mode], {
    cwd: ROOT,
    env: { ...process.env, TSX_TSCONFIG_PATH: join(ROOT, "tsconfig.test.json") },
    stdio: ["ignore", "pipe", "pipe"],
  });
  const lines: string[] = [];
  let buffered = "";
  let stderr = "";
  const waiters: (() => void)[] = [];
  child.stdout!.on("data", (chunk: Buffer) => {
    buffered += chunk.toString();
    const parts = buffered.split("\n");
    buffered = parts.pop()!;
    lines.push(...parts);
    for (const wake of waiters.splice(0)) wake();
  });
  child.stderr!.on("data", (chunk: Buffer) => (stderr += chunk.toString()));
  const waitFor = (line: RegExp, count = 1): Promise<void> =>
    new Promise((done, fail) => {
      const check = (): void => {
        if (lines.filter((seen) => line.test(seen)).length >= count) done();
        else if (child.exitCode !== null) fail(new Error(`child exited early: ${stderr}`));
        else waiters.push(check);
      };
      child.once("exit", () => waiters.length > 0 && check());
      check();
    });
  return { child, lines, waitFor };
}

const exited = (child: ChildProcess): Promise<{ code: number | null; signal: NodeJS.Signals | null }> =>
  new Promise((done) => {
    if (child.exitCode !== null || child.signalCode !== null) done({ code: child.exitCode, signal: child.signalCode });
    else child.once("exit", (code, signal) => done({ code, signal }));
  });

test("SIGKILL mid-run loses no committed node, and the running call is interrupted on reopen", async () => {
  const path = join(directory, "sessions.db");
  const { child, lines, waitFor } = startChild(path, "kill");
  await waitFor(/^committed llm-/, 25);
  child.kill("SIGKILL");
  expect((await exited(child)).signal).toBe("SIGKILL");

  const committed = lines.filter((line) => line.startsWith("committed ")).map((line) => line.slice("committed ".length));
  const store = new SessionStore({ path, shutdownFlush: false });
  try {
    const nodes = store.readNodes("crash");
    const stored = new Set(nodes.map((node) => node.id));
    for (const id of committed) expect(stored.has(id)).toBe(true);
    expect(nodes.find((node) => node.id === "call")!.metadata["status"]).toBe("interrupted");
    expect(store.head("crash")).toBe("call");
  } finally {
    store.close();
  }
}, 60_000); // sized for a loaded 2-core machine

test.each(["SIGTERM", "SIGINT"] as const)(
  "%s flushes the pending batch and marks running nodes interrupted before exit",
  async (signal) => {
    const path = join(directory, "sessions.db");
    const { child, waitFor } = startChild(path, "signal");
    await waitFor(/^queued pending-4$/);
    child.kill(signal);
    // The signal keeps its default effect after the flush.
    expect((await exited(child)).signal).toBe(signal);

    // Read the file directly: opening a SessionStore would itself interrupt
    // the dead child's running nodes, hiding whether the handler did.
    const db = new Database(path);
    try {
      const rows = db.prepare("SELECT id, status, json_extract(metadata, '$.status') FROM rein_nodes ORDER BY seq").raw().all();
      expect(rows).toEqual([
        ["call", "interrupted", "interrupted"],
        ...[0, 1, 2, 3, 4].map((index) => [`pending-${index}`, null, null]),
      ]);
    } finally {
      db.close();
    }
  },
  30000,
);
