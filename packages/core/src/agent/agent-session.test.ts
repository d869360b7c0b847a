import { spawn } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { Context } from "../context/context";
import { ScriptedProvider } from "../model/scripted-provider";
import { Runtime } from "../runtime/runtime";
import { SessionStore } from "@rein/session";
import { SessionNodeWriter } from "@rein/session";
import { Agent } from "./agent";

const ROOT = resolve(__dirname, "../../../..");

class Researcher extends Agent {
  static instructions = "Answer briefly.";
  async research(question: string) {
    return this.ask(question);
  }
}

let directory: string;
beforeEach(() => {
  directory = mkdtempSync(join(tmpdir(), "rein-agent-session-"));
});
afterEach(() => rmSync(directory, { recursive: true, force: true }));

describe("explicit session lifecycle", () => {
  it("two successive calls with one Context continue one session; the caller closes the store", async () => {
    const path = join(directory, "sessions.db");
    const store = new SessionStore({ path, shutdownFlush: false });
    store.createSession("chat", { agentId: "Researcher" });
    const model = new ScriptedProvider(["Paris.", "About 2.1 million."]);
    const researcher = new Researcher({
      runtime: new Runtime({ provider: model }),
      context: new Context({}, { store: new SessionNodeWriter(store, "chat") }),
    });
    await researcher.research("Capital of France?");
    await researcher.research("Its population?");
    const second = JSON.stringify(model.requests[1].messages);
    expect(second).toContain("Capital of France?");
    expect(second).toContain("Paris.");
    store.close();

    // Another store on the same file (as another process would) sees every committed node.
    const reopened = new SessionStore({ path, shutdownFlush: false });
    const nodes = reopened.readNodes("chat");
    expect(nodes.filter((n) => n.name === "Researcher.research")).toHaveLength(2);
    expect(nodes.filter((n) => n.role === "llm")).toHaveLength(2);
    expect(nodes.every((n) => n.metadata["status"] === "completed")).toBe(true);
    reopened.close();
  });

  it("a finished top-level call is committed at once, without waiting for the batch", async () => {
    const store = new SessionStore({ path: join(directory, "commit.db"), shutdownFlush: false });
    store.createSession("s", {});
    class Counter extends Agent {
      add(a: number, b: number) {
        return a + b;
      }
    }
    const counter = new Counter({ context: new Context({}, { store: new SessionNodeWriter(store, "s") }) });
    expect(counter.add(2, 3)).toBe(5);
    // No flush and no tick has passed: a second connection already sees the completed node.
    const other = new SessionStore({ path: join(directory, "commit.db"), shutdownFlush: false });
    expect(other.readNodes("s")).toMatchObject([{ name: "Counter.add", output: 5, metadata: { status: "completed" } }]);
    other.close();
    store.close();
  });

  it("without a store, each call is standalone: no history carries over", async () => {
    const model = new ScriptedProvider(["one", "two"]);
    const researcher = new Researcher({ runtime: new Runtime({ provider: model }) });
    await researcher.research("first");
    await researcher.research("second");
    expect(JSON.stringify(model.requests[1].messages)).not.toContain("first");
  });

  it("two calls from the same head make two branches; headId undefined continues from the head", async () => {
    const store = new SessionStore({ path: ":memory:" });
    store.createSession("s", {});
    const writer = new SessionNodeWriter(store, "s");
    const model = new ScriptedProvider(["root answer", "branch A", "branch B", "after B"]);
    const runtime = new Runtime({ provider: model });
    await new Researcher({ runtime, context: new Context({}, { store: writer }) }).research("root question");
    writer.flush();
    const root = store.head("s")!;
    for (const question of ["variant A", "variant B"]) {
      await new Researcher({ runtime, context: new Context({}, { store: writer, headId: root }) }).research(question);
    }
    writer.flush();
    expect(store.listBranches("s")).toHaveLength(2);
    // Each branch saw the root exchange, not the sibling branch.
    expect(JSON.stringify(model.requests[2].messages)).toContain("root question");
    expect(JSON.stringify(model.requests[2].messages)).not.toContain("variant A");
    // Continuing from the current head (branch B).
    await new Researcher({ runtime, context: new Context({}, { store: writer }) }).research("continue");
    expect(JSON.stringify(model.requests[3].messages)).toContain("variant B");
    store.close();
  });
});

test("an agent killed with SIGKILL mid-run loses no committed node; running calls are interrupted on reopen", async () => {
  const path = join(directory, "crash.db");
  const child = spawn(
    process.execPath,
    ["--require", require.resolve("tsx/cjs"), join(__dirname, "__fixtures__", "agent-crash-child.ts"), path],
    { cwd: ROOT, env: { ...process.env, TSX_TSCONFIG_PATH: join(ROOT, "tsconfig.test.json") }, stdio: ["ignore", "pipe", "pipe"] },
  );
  const lines: string[] = [];
  let stderr = "";
  child.stderr.on("data", (chunk: Buffer) => (stderr += chunk.toString()));
  await new Promise<void>((done, fail) => {
    child.stdout.on("data", (chunk: Buffer) => {
      lines.push(...chunk.toString().split("\n").filter(Boolean));
      // The run waits on the hung tool: the writer's batch, with the llm nodes so far, commits meanwhile.
      if (lines.includes("hanging") && lines.filter((line) => line.startsWith("committed ")).length >= 4) done();
    });
    child.once("exit", () => fail(new Error(`child exited early: ${stderr}`)));
  });
  child.kill("SIGKILL");
  await new Promise((done) => child.once("exit", done));

  const committed = lines.filter((line) => line.startsWith("committed ")).map((line) => line.slice(10));
  expect(committed.length).toBeGreaterThanOrEqual(4);
  const store = new SessionStore({ path, shutdownFlush: false });
  try {
    const nodes = store.readNodes("crawl");
    const ids = new Set(nodes.map((n) => n.id));
    for (const id of committed) expect(ids.has(id)).toBe(true);
    const crawl = nodes.find((n) => n.name === "Crawler.crawl")!;
    expect(crawl.metadata["status"]).toBe("interrupted");
    expect(nodes.some((n) => n.metadata["status"] === "running")).toBe(false);
  } finally {
    store.close();
  }
}, 60_000); // sized for a loaded 2-core machine
