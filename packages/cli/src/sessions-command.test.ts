import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Context, SessionNodeWriter, SessionStore } from "rein";
import { Planner } from "../../../examples/cli-chain";
import { runMain } from "./__fixtures__/run-main";
import { ExitCode } from "./exit-codes";

let dir: string;
let storePath: string;

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), "rein-cli-sessions-"));
  storePath = join(dir, "sessions.db");
  process.env["CLI_CHAIN_PAUSE_MS"] = "0";
  const store = new SessionStore({ path: storePath, shutdownFlush: false });
  store.createSession("chain-1", { agentId: "Planner", title: "Summarize recursion" });
  await new Planner({ context: Context.forSession(store, "chain-1") }).plan("Summarize recursion");
  store.createSession("empty-1", { agentId: "Nobody", title: "Nothing yet" });
  store.close();
});

afterAll(() => {
  delete process.env["CLI_CHAIN_PAUSE_MS"];
  rmSync(dir, { recursive: true, force: true });
});

test("sessions ls lists every session with its agent, node count and title", async () => {
  const { code, stdout, stderr } = await runMain(["sessions", "ls", "--store", storePath]);
  expect({ code, stderr }).toEqual({ code: ExitCode.Ok, stderr: "" });
  const lines = stdout.trimEnd().split("\n");
  expect(lines[0]).toMatch(/^ID\s+AGENT\s+NODES\s+UPDATED\s+TITLE$/);
  expect(lines.slice(1).find((line) => line.startsWith("chain-1"))).toMatch(/^chain-1\s+Planner\s+4\s+\d{4}-\d\d-\d\d \d\d:\d\d:\d\d\s+Summarize recursion$/);
  expect(lines.slice(1).find((line) => line.startsWith("empty-1"))).toMatch(/Nobody\s+0\s/);
});

test("--store is resolved from the working directory; the default is .rein/sessions.db", async () => {
  const relative = await runMain(["sessions", "ls", "--store", "sessions.db"], dir);
  expect(relative.code).toBe(ExitCode.Ok);
  const missing = await runMain(["sessions", "ls"], dir);
  expect(missing.code).toBe(ExitCode.Failed);
  expect(missing.stderr).toBe(`rein: no session store at ${join(dir, ".rein", "sessions.db")} (run \`rein run\` first, or pass --store <path>)\n`);
});

test("sessions show prints the session and its nodes, indented by caller, with their status", async () => {
  const { code, stdout } = await runMain(["sessions", "show", "chain-1", "--store", storePath]);
  expect(code).toBe(ExitCode.Ok);
  expect(stdout).toContain("Session chain-1\n  agent:   Planner\n  title:   Summarize recursion\n");
  expect(stdout).toContain("  nodes:   4\n");
  const nodes = stdout.split("\n\n")[1]!.trimEnd().split("\n");
  expect(nodes).toHaveLength(4);
  expect(nodes[0]).toMatch(/^ {3}0 {2}code Planner\.plan \[completed\] \(head\) {2}Recursion is a function/);
  expect(nodes[1]).toMatch(/^ {3}1 {4}code Researcher\.research \[completed\]/);
  expect(nodes[2]).toMatch(/^ {3}2 {6}llm scripted-researcher \[completed\]/);
  expect(nodes[3]).toMatch(/^ {3}3 {4}llm scripted-planner \[completed\]/);
});

test("what a model, a tool or a caller recorded is shown with its control characters written out: no escape sequence reaches the terminal (ls, show, export)", async () => {
  const path = join(dir, "escapes.db");
  const store = new SessionStore({ path, shutdownFlush: false });
  const clipboard = "\x1b]52;c;cm0gLXJmIH4K\x07";
  store.createSession("esc-1", { agentId: "Echo\x1b[2J", title: `T${clipboard}` });
  const writer = new SessionNodeWriter(store, "esc-1");
  writer.append({ id: "n-esc-1", role: "code", name: "Echo.go\x1b[1A", input: [], output: `harmless${clipboard}\x1b[2Kfaked line`, metadata: { status: "completed" } });
  writer.flush();
  store.close();
  const outputs = await Promise.all([["sessions", "ls"], ["sessions", "show", "esc-1"], ["sessions", "export", "esc-1", "--format", "mermaid"]].map((args) => runMain([...args, "--store", path])));
  for (const { code, stdout } of outputs) {
    expect(code).toBe(ExitCode.Ok);
    expect(stdout).not.toMatch(/[\u0000-\u0009\u000b-\u001f\u007f-\u009f]/);
  }
  const [listed, shownSession] = outputs.map((output) => output.stdout);
  expect(listed).toContain("Echo\\x1b[2J");
  expect(shownSession).toContain("title:   T\\x1b]52;c;cm0gLXJmIH4K\\x07\n");
  expect(shownSession).toContain("code Echo.go\\x1b[1A [completed] (head)  harmless\\x1b]52;c;cm0gLXJmIH4K\\x07\\x1b[2Kfaked line");
});

test("sessions show of an unknown id fails with the store's one-line message (exit 1); --verbose adds the stack", async () => {
  const plain = await runMain(["sessions", "show", "nope", "--store", storePath]);
  expect(plain.code).toBe(ExitCode.Failed);
  expect(plain.stderr).toMatch(/^rein: Session 'nope' does not exist in session store .*\n$/);
  const verbose = await runMain(["sessions", "show", "nope", "--store", storePath, "--verbose"]);
  expect(verbose.code).toBe(ExitCode.Failed);
  expect(verbose.stderr).toMatch(/\n\s+at /);
});

test.each([["show"], ["export"]])("sessions %s '' is a usage error: one line saying to pass a session id (exit 2)", async (command) => {
  const { code, stdout, stderr } = await runMain(["sessions", command, "", "--store", storePath]);
  expect({ code, stdout }).toEqual({ code: ExitCode.UsageError, stdout: "" });
  expect(stderr).toBe("rein: <id> must be a session id, got '' (rein sessions ls lists them)\n");
});

test.each([
  ["mermaid", (text: string) => expect(text).toMatch(/^flowchart TD\n {2}n0\["code: Planner\.plan \(completed\)"\]\n/)],
  ["dot", (text: string) => expect(text).toMatch(/^digraph "chain-1" \{\n {2}node \[shape=box\];\n {2}n0 \[label="code: Planner\.plan \(completed\)", penwidth=3\];/)],
  ["json", (text: string) => expect(JSON.parse(text)).toMatchObject({ session: { id: "chain-1", nodeCount: 4 }, nodes: expect.any(Array) })],
])("sessions export --format %s prints the store's graph", async (format, check) => {
  const { code, stdout } = await runMain(["sessions", "export", "chain-1", "--format", format, "--store", storePath]);
  expect(code).toBe(ExitCode.Ok);
  check(stdout);
  const store = new SessionStore({ path: storePath, shutdownFlush: false });
  try {
    expect(stdout.trimEnd()).toBe(store.exportGraph("chain-1", { format: format as "mermaid" | "dot" | "json" }).trimEnd());
  } finally {
    store.close();
  }
});

test("sessions export defaults to mermaid", async () => {
  const { stdout } = await runMain(["sessions", "export", "chain-1", "--store", storePath]);
  expect(stdout.startsWith("flowchart TD\n")).toBe(true);
});
