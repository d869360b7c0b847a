import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { CliIo } from "./cli-io";
import { main } from "./cli";
import { ExitCode } from "./exit-codes";
import { serveCommand } from "./serve-command";

const EXAMPLE = join(__dirname, "..", "..", "..", "examples", "cli-chain.ts");

let dir: string;
beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), "rein-cli-inspector-"));
  process.env["CLI_CHAIN_PAUSE_MS"] = "0";
});
afterAll(() => {
  delete process.env["CLI_CHAIN_PAUSE_MS"];
  rmSync(dir, { recursive: true, force: true });
});

function collecting(onLine: (out: string) => void): { io: CliIo; out: () => string } {
  let out = "";
  const io: CliIo = { stdout: (text) => ((out += text), onLine(out)), stderr: (text) => (out += text), isTTY: false, cwd: dir, env: process.env };
  return { io, out: () => out };
}

describe("rein serve --inspector and rein inspect", () => {
  it("rein serve <module> --inspector mounts the page at /inspector, says where, and its runs feed answers", async () => {
    let listening: (url: string) => void = () => undefined;
    const url = new Promise<string>((resolve) => (listening = resolve));
    const { io, out } = collecting((text) => {
      const found = /inspector at (http:\/\/127\.0\.0\.1:\d+\/inspector)/.exec(text);
      if (found) listening(found[1]!);
    });
    let stop: (code: number) => void = () => undefined;
    const serving = serveCommand(io, EXAMPLE, { port: 0, store: join(dir, "served.db"), mintRootBudget: true, inspector: true, until: new Promise((resolve) => (stop = resolve)) });
    const page = await url;
    const html = await fetch(page);
    expect(html.headers.get("content-type")).toContain("text/html");
    expect(await html.text()).toContain('aria-label="Runs"');
    const base = page.replace(/\/inspector$/, "");
    expect(await (await fetch(`${base}/inspector/api/config`)).json()).toMatchObject({ readOnly: false });
    const feed = await fetch(`${base}/v1/runs/events`);
    expect(feed.headers.get("content-type")).toBe("text/event-stream");
    const first = await feed.body!.getReader().read();
    expect(new TextDecoder().decode(first.value)).toMatch(/^event: snapshot\ndata: \{"type":"snapshot","runs":\[\]\}\n\n/);
    await feed.body?.cancel().catch(() => undefined);
    stop(ExitCode.Ok);
    expect(await serving).toBe(ExitCode.Ok);
    expect(out()).toContain("rein serve: stopped");
  });

  it("without --inspector there is no page", async () => {
    let listening: (url: string) => void = () => undefined;
    const url = new Promise<string>((resolve) => (listening = resolve));
    const { io } = collecting((text) => {
      const found = /on (http:\/\/127\.0\.0\.1:\d+)/.exec(text);
      if (found) listening(found[1]!);
    });
    let stop: (code: number) => void = () => undefined;
    const serving = serveCommand(io, EXAMPLE, { port: 0, store: join(dir, "plain.db"), until: new Promise((resolve) => (stop = resolve)) });
    expect((await fetch(`${await url}/inspector`)).status).toBe(404);
    stop(ExitCode.Ok);
    await serving;
  });

  it("rein inspect is listed in the help, and a missing store is refused, naming where it looked", async () => {
    let out = "";
    const io: CliIo = { stdout: (text) => void (out += text), stderr: (text) => void (out += text), isTTY: false, cwd: dir, env: process.env };
    expect(await main(["--help"], io)).toBe(ExitCode.Ok);
    expect(out).toContain("inspect [options] [store]");
    out = "";
    const code = await main(["inspect", "missing.db", "--port", "0"], io);
    expect(code).not.toBe(ExitCode.Ok);
    expect(out).toContain("no session store at");
  });
});
