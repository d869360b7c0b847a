import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Agent, Context, Runtime, ScriptedProvider, SessionStore } from "rein";
import type { CliIo } from "./cli-io";
import { ExitCode } from "./exit-codes";
import { inspectCommand } from "./inspect-command";

class Writer extends Agent {
  static runtime = new Runtime({ provider: new ScriptedProvider(["a draft"], { whenExhausted: "repeat-last" }) });
  async draft(topic: string): Promise<string> {
    return this.ask(`write about ${topic}`);
  }
}

let dir: string;
beforeAll(() => (dir = mkdtempSync(join(tmpdir(), "rein-cli-inspect-"))));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

function io(out: string[]): CliIo {
  return { stdout: (text) => void out.push(text), stderr: (text) => void out.push(text), isTTY: false, cwd: dir, env: process.env };
}

describe("rein inspect <store>", () => {
  it("serves the read-only Inspector over a SQLite file written before it started, prints its URL, and stops when asked", async () => {
    const path = join(dir, "sessions.db");
    const writer = new SessionStore({ path, shutdownFlush: false });
    await new Writer({ context: Context.forSession(writer, "essay") }).draft("rivers");
    writer.close();

    const out: string[] = [];
    let stop: (code: number) => void = () => undefined;
    let listening: (url: string) => void = () => undefined;
    const url = new Promise<string>((resolve) => (listening = resolve));
    const done = inspectCommand(io(out), "sessions.db", { port: 0, until: new Promise((resolve) => (stop = resolve)), onListening: listening });
    const page = await url;
    expect(out.join("")).toMatch(/^rein inspect: http:\/\/127\.0\.0\.1:\d+\/inspector \(read-only, .*sessions\.db\); Ctrl-C stops it\n$/);

    const html = await (await fetch(page)).text();
    expect(html).toContain('<table id="runs" aria-label="Runs">');
    expect(await (await fetch(`${page}/app.js`)).text()).toContain("Rein Inspector");
    const base = page.replace(/\/inspector$/, "");
    expect(await (await fetch(`${base}/inspector/api/config`)).json()).toMatchObject({ readOnly: true, live: false });
    const { sessions } = (await (await fetch(`${base}/inspector/api/sessions`)).json()) as { sessions: { id: string; nodeCount: number }[] };
    expect(sessions).toEqual([expect.objectContaining({ id: "essay", nodeCount: 2 })]);
    const nodes = (await (await fetch(`${base}/inspector/api/sessions/essay/nodes?limit=1`)).json()) as { nodes: { role: string; name: string }[]; total: number; more: boolean };
    expect(nodes).toMatchObject({ total: 2, more: true, nodes: [{ role: "code", name: "Writer.draft" }] });
    // Read-only: nothing can be run, stopped, approved or resumed here.
    for (const [method, route] of [
      ["POST", "/v1/agent/run"],
      ["POST", "/v1/runs/x/cancel"],
      ["POST", "/v1/runs/x/resume"],
      ["POST", "/v1/runs/x/approvals/y"],
      ["GET", "/v1/runs/events"],
    ] as const) {
      expect((await fetch(`${base}${route}`, { method })).status).toBe(404);
    }
    stop(ExitCode.Ok);
    expect(await done).toBe(ExitCode.Ok);
  });

  it("a missing store file is a usage error naming where it looked (no empty store is created)", async () => {
    await expect(inspectCommand(io([]), "nope.db", { port: 0, until: Promise.resolve(0) })).rejects.toThrow(/no session store at .*nope\.db/);
  });
});
