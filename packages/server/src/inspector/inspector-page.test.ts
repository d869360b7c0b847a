import { mkdirSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import type { Browser, Page } from "playwright-core";
import { launchHeadlessChromium } from "../__fixtures__/headless-chromium";
import { InMemorySessionStore, ReachPolicy, SessionStore, type SessionStoreLike } from "rein";
import { createServer } from "../create-server";
import { InMemoryApiKeyStore } from "../auth";
import { serve, type RunningServer } from "../serve";
import type { Entries } from "../entries";
import { deployments, inspectorEntries, waitingProviders } from "../__fixtures__/inspector-agents";
import { pipelineCalls, pipelineFaults, resumableEntries } from "../__fixtures__/agents";
import { withUnsignedPolicyHeaders } from "../__fixtures__/unsigned-headers";
import { MemoryQueue } from "../__fixtures__/memory-queue";
import { startBackgroundWorker } from "../background/background-worker";

/** Screenshots the tests take (git-ignored): docs/inspector.md shows them. */
export const ARTIFACTS = resolve(__dirname, "..", "..", "..", "..", "test-artifacts", "inspector");

withUnsignedPolicyHeaders();

const reach = new ReachPolicy({ maxLogicDepth: 6, maxTokens: 20_000, maxCostUsd: 0.5, timeoutMs: 600_000, pricing: { scripted: { inputPerMTok: 3, outputPerMTok: 15 }, waiting: { inputPerMTok: 3, outputPerMTok: 15 } } });

let browser: Browser;
let server: RunningServer | undefined;
let page: Page;
let pageErrors: string[];

beforeAll(async () => {
  browser = await launchHeadlessChromium();
  mkdirSync(ARTIFACTS, { recursive: true });
});
beforeEach(() => (pageErrors = []));
afterAll(async () => {
  await browser?.close();
});
afterEach(async () => {
  await page?.context().close();
  await server?.close();
  server = undefined;
  // No uncaught error in the page, in any test.
  expect(pageErrors).toEqual([]);
});

async function open(entries: Entries, store: SessionStoreLike = new InMemorySessionStore(), viewport = { width: 1280, height: 800 }, queue?: MemoryQueue): Promise<Page> {
  server = await serve({ app: createServer({ entries, store, reach, mintRootBudget: true, inspector: true, ...(queue === undefined ? {} : { queue }) }), resumeInterrupted: false, warn: () => undefined });
  const context = await browser.newContext({ viewport });
  page = await context.newPage();
  page.on("pageerror", (error) => pageErrors.push(error.message));
  await page.goto(`${server.url}/inspector`);
  await page.getByText("live", { exact: true }).waitFor();
  // Set once: a reload would lose it.
  await page.evaluate(() => ((globalThis as unknown as { loadedOnce: boolean }).loadedOnce = true));
  return page;
}

function startRun(entry: string, runId: string, body: object = { task: "task-1" }): Promise<Record<string, unknown>> {
  return fetch(`${server!.url}/v1/agent/run`, {
    method: "POST",
    headers: { "content-type": "application/json", "x-run-id": runId },
    body: JSON.stringify({ entry, ...body }),
  }).then((response) => response.json() as Promise<Record<string, unknown>>);
}

const runsTable = () => page.getByRole("table", { name: "Runs" });
const runRow = (entry: string, status: string) => runsTable().getByRole("row").filter({ hasText: entry }).filter({ hasText: status });
const notReloaded = () => page.evaluate(() => (globalThis as unknown as { loadedOnce?: boolean }).loadedOnce === true);

describe("the Inspector page (headless Chromium)", () => {
  it("Runs: a run started after the page loaded appears and updates live, with requests, tokens and cost, without a reload", async () => {
    await open(inspectorEntries);
    expect(await runsTable().getByText("No runs yet.").isVisible()).toBe(true);
    const answer = await startRun("quick", "run-quick-1");
    expect(answer).toMatchObject({ status: "completed" });
    const row = runRow("quick", "completed");
    await row.waitFor();
    const cells = await row.getByRole("cell").allInnerTexts();
    // Entry (row header), then status, elapsed, requests, tokens, cost.
    expect(cells[0]).toContain("completed");
    expect(cells[2]).toBe("1");
    expect(cells[3]).toBe("42");
    expect(cells[4]).toMatch(/^\$0\.000[0-9]$/);
    expect(await notReloaded()).toBe(true);
  });

  it("Stop cancels a running run: the provider's signal aborts, the caller gets status cancelled, the row turns cancelled", async () => {
    await open(inspectorEntries);
    const before = waitingProviders.length;
    const answer = startRun("wait", "run-stop-1");
    await runRow("wait", "running").waitFor();
    while (waitingProviders.length === before) await new Promise((resolve) => setTimeout(resolve, 10));
    const provider = waitingProviders[before]!;
    await provider.started;
    // Its first request has not been answered, so no reach-status yet: the gauge shows the budget it was admitted with.
    await runRow("wait", "running").getByRole("button", { name: "wait", exact: true }).click();
    expect(await page.getByRole("meter", { name: "Depth" }).getAttribute("max")).toBe("6");
    // Keyboard reachable: Tab reaches the row's Stop (no pointer), Enter presses it.
    const stopInRow = runsTable().locator("tr", { hasText: "wait" }).getByRole("button", { name: "Stop", exact: true });
    for (let presses = 0; presses < 40 && !(await stopInRow.evaluate((button) => button === (button.ownerDocument as unknown as { activeElement: unknown }).activeElement)); presses++) {
      await page.keyboard.press("Tab");
    }
    expect(await stopInRow.evaluate((button) => button === (button.ownerDocument as unknown as { activeElement: unknown }).activeElement)).toBe(true);
    await page.keyboard.press("Enter");
    expect(await provider.aborted).toBeDefined();
    expect(await answer).toMatchObject({ status: "cancelled" });
    await runRow("wait", "cancelled").waitFor();
    expect(await runsTable().getByRole("button", { name: "Stop", exact: true }).count()).toBe(0);
    expect(await notReloaded()).toBe(true);
  });

  it("a background run this server queued shows queued with Stop; Stop cancels it, and the row turns cancelled when a worker takes it", async () => {
    const queue = new MemoryQueue({ channel: true });
    const store = new InMemorySessionStore();
    await open(inspectorEntries, store, undefined, queue);
    const accepted = await fetch(`${server!.url}/v1/agent/run`, {
      method: "POST",
      headers: { "content-type": "application/json", prefer: "respond-async" },
      body: JSON.stringify({ entry: "quick", task: "later" }),
    });
    expect(accepted.status).toBe(202);
    await runRow("quick", "queued").waitFor();
    await runRow("quick", "queued").getByRole("button", { name: "Stop", exact: true }).click();
    while (queue.channel!.controls.length === 0) await new Promise((resolve) => setTimeout(resolve, 10));
    expect(queue.channel!.controls).toEqual([expect.objectContaining({ action: "cancel" })]);
    const worker = await startBackgroundWorker({ entries: inspectorEntries, store, queue, onInternalError: () => undefined });
    try {
      await runRow("quick", "cancelled").waitFor();
      expect(await runsTable().getByRole("button", { name: "Stop", exact: true }).count()).toBe(0);
      expect(await notReloaded()).toBe(true);
    } finally {
      await Promise.all(queue.done);
      await worker.stop();
    }
  });

  it("Approve lets the waiting tool call run once and the turn completes", async () => {
    deployments.length = 0;
    await open(inspectorEntries);
    const answer = startRun("ship", "run-approve-ui");
    await runRow("ship", "running").getByRole("button", { name: "ship", exact: true }).click();
    const approve = page.getByRole("button", { name: "Approve", exact: true });
    await approve.waitFor();
    expect(await page.getByRole("group").filter({ hasText: "deploy" }).innerText()).toContain('"service": "api"');
    expect(deployments).toEqual([]);
    await approve.click();
    // The graph grows without a reload: the tool's node and the run's end appear.
    await page.getByRole("button", { name: "code: Deployer.deploy (completed)", exact: true }).waitFor();
    await page.getByRole("button", { name: "code: Deployer.ship (completed)", exact: true }).waitFor();
    const result = await answer;
    expect(result).toMatchObject({ status: "completed" });
    expect(result["result"]).toContain("deployed api");
    expect(deployments).toEqual(["api"]);
    await runRow("ship", "completed").waitFor();
    await page.getByRole("button", { name: "Approve", exact: true }).waitFor({ state: "detached" });
  });

  it("a node the page read while it ran shows what it ended with: the open detail follows, and opened again it is current", async () => {
    deployments.length = 0;
    await open(inspectorEntries);
    const answer = startRun("ship", "run-stale-detail");
    await runRow("ship", "running").getByRole("button", { name: "ship", exact: true }).click();
    // The run's node is read while it runs, and its detail is open.
    await page.getByRole("button", { name: "code: Deployer.ship (running)", exact: true }).click();
    const detail = page.getByRole("region", { name: "Node" });
    await detail.getByText("running", { exact: true }).waitFor();
    await page.getByRole("button", { name: "Approve", exact: true }).click();
    expect(await answer).toMatchObject({ status: "completed" });
    // Without a click, the open detail shows the output the node ended with.
    await detail.getByText(/tool said/).waitFor();
    // Opened again from the graph, the same.
    await page.getByRole("button", { name: "code: Deployer.deploy (completed)", exact: true }).click();
    await page.getByRole("button", { name: "code: Deployer.ship (completed)", exact: true }).click();
    await detail.getByText(/tool said/).waitFor();
    expect(await notReloaded()).toBe(true);
  });

  it("Deny refuses the waiting tool call: it never runs and the model is told", async () => {
    deployments.length = 0;
    await open(inspectorEntries);
    const answer = startRun("ship", "run-deny-ui");
    await runRow("ship", "running").getByRole("button", { name: "ship", exact: true }).click();
    await page.getByRole("button", { name: "Deny", exact: true }).click();
    const result = await answer;
    expect(result).toMatchObject({ status: "completed" });
    expect(result["result"]).toContain("not approved");
    expect(deployments).toEqual([]);
  });

  it("a turn paused on an approval: the row shows paused, Approve resumes it once (the tool runs once, the turn completes), a second answer is 409", async () => {
    deployments.length = 0;
    await open(inspectorEntries);
    const paused = await startRun("pause", "run-paused-ui");
    const turn = paused["result"] as { status: string; continuation: { awaiting: { toolCallId: string } } };
    expect(turn.status).toBe("paused");
    await runRow("pause", "paused").getByRole("button", { name: "pause", exact: true }).click();
    const approve = page.getByRole("button", { name: "Approve", exact: true });
    await approve.waitFor();
    expect(await page.getByRole("group").filter({ hasText: "deploy" }).innerText()).toContain('"service": "api"');
    expect(deployments).toEqual([]);
    await page.screenshot({ path: join(ARTIFACTS, "inspector-paused-1280x800.png"), fullPage: true });
    await approve.click();
    await page.getByText(/^Approved .*; the resumed turn completed$/).waitFor();
    await runRow("pause", "completed").waitFor();
    await page.getByRole("button", { name: "code: PausingDeployer.deploy (completed)", exact: true }).waitFor();
    await page.getByRole("button", { name: "Approve", exact: true }).waitFor({ state: "detached" });
    expect(deployments).toEqual(["api"]);
    const again = await fetch(`${server!.url}/v1/runs/run-paused-ui/approvals/${turn.continuation.awaiting.toolCallId}`, { method: "POST", headers: { "content-type": "application/json" }, body: '{"approve":true}' });
    expect(again.status).toBe(409);
    expect(deployments).toEqual(["api"]);
    expect(await notReloaded()).toBe(true);
  });

  it("a turn paused on an approval: Deny resumes it with a refusal, the tool never runs and the model is told", async () => {
    deployments.length = 0;
    await open(inspectorEntries);
    await startRun("pause", "run-paused-deny-ui");
    await runRow("pause", "paused").getByRole("button", { name: "pause", exact: true }).click();
    await page.getByRole("button", { name: "Deny", exact: true }).click();
    await page.getByText(/^Denied .*; the resumed turn completed$/).waitFor();
    await runRow("pause", "completed").waitFor();
    // The model's last answer (its llm node's response) carries the refusal it was sent. The graph may show the run's
    // first llm node before the resumed turn's: wait for the second (the tool call, then the answer), then open it.
    const answer = page.getByRole("button", { name: "llm: scripted (completed)", exact: true }).nth(1);
    await answer.waitFor();
    await answer.click();
    await page.getByRole("region", { name: "Node" }).getByText(/was not approved/).first().waitFor();
    expect(deployments).toEqual([]);
  });

  it("the graph: each node has data-node-id and the accessible name '<kind>: <name> (<status>)'; an llm node's detail highlights the situational guidance", async () => {
    await open(inspectorEntries);
    await startRun("quick", "run-graph-1");
    await runRow("quick", "completed").getByRole("button", { name: "quick", exact: true }).click();
    const code = page.getByRole("button", { name: "code: Quick.research (completed)", exact: true });
    const llm = page.getByRole("button", { name: "llm: scripted (completed)", exact: true });
    await code.waitFor();
    await llm.waitFor();
    expect(await code.getAttribute("data-node-id")).toMatch(/.+/);
    expect(await llm.getAttribute("data-node-id")).toMatch(/.+/);
    const names = await page.locator("[data-node-id]").evaluateAll((nodes) => nodes.map((node) => node.getAttribute("aria-label")));
    for (const name of names) expect(name).toMatch(/^(code|llm): .+ \((running|completed|error|cancelled|interrupted|paused)\)$/);
    // Status by text as well as colour.
    expect(await code.innerText()).toContain("completed");
    await llm.click();
    const detail = page.getByRole("region", { name: "Node" });
    await detail.getByText(/^Situational guidance/).waitFor();
    expect(await detail.locator("mark").innerText()).toContain("You are running INSIDE the function `Quick.research`");
    // The request as the runtime recorded it sent: the user turn with the guidance first (highlighted), then the task.
    await detail.getByRole("heading", { name: "Request as sent" }).waitFor();
    expect(await detail.innerText()).toContain("No earlier messages.");
    const turn = await detail.locator("ol.blocks").first().locator(":scope > li").allInnerTexts();
    expect(turn[0]).toContain("You are running INSIDE the function `Quick.research`");
    expect(turn[turn.length - 1]).toContain("task-1");
    expect(await detail.locator("ol.blocks").first().locator(":scope > li").first().locator("mark").count()).toBe(1);
    expect(await detail.innerText()).toContain("quick answer");
    expect(await detail.innerText()).toContain("30 in / 12 out tokens");
  });

  it("guard refusals are marked on the llm node whose tool call was refused (in text, not only colour), read from the recorded session", async () => {
    await open(inspectorEntries);
    expect(await startRun("dig", "run-dig-1")).toMatchObject({ status: "error", error: { name: "RecursionError" } });
    await runRow("dig", "error").getByRole("button", { name: "dig", exact: true }).click();
    const marked = page.locator(".graph-node.marked");
    await marked.first().waitFor();
    const refused = page.getByRole("button", { name: "llm: scripted (completed)", exact: true, description: /guard refusal/ }).first();
    expect(await refused.getAttribute("data-node-id")).toMatch(/.+/);
    expect(await refused.innerText()).toContain("⚠ guard refusal");
    await refused.click();
    await page.screenshot({ path: join(ARTIFACTS, "inspector-runaway-1280x800.png"), fullPage: true });
  });

  it("the reach gauge: meters named Depth, Tokens, Cost and Deadline show a running run's reach", async () => {
    await open(inspectorEntries);
    const answer = startRun("ship", "run-reach-1");
    await runRow("ship", "running").getByRole("button", { name: "ship", exact: true }).click();
    for (const name of ["Depth", "Tokens", "Cost", "Deadline"]) await page.getByRole("meter", { name }).waitFor();
    const depth = page.getByRole("meter", { name: "Depth" });
    expect(Number(await depth.getAttribute("value"))).toBeGreaterThanOrEqual(1);
    expect(await depth.getAttribute("max")).toBe("6");
    expect(await page.getByRole("meter", { name: "Tokens" }).getAttribute("aria-valuetext")).toMatch(/^26 \/ 20\.0k$/);
    expect(await page.getByRole("meter", { name: "Cost" }).getAttribute("max")).toBe("0.5");
    expect(await page.getByRole("meter", { name: "Deadline" }).getAttribute("aria-valuetext")).toMatch(/^[0-9.]+ m?s \/ 10 min 0 s$/);
    await page.getByRole("button", { name: "Deny", exact: true }).click();
    await answer;
  });

  it("Resume continues a failed resumable run from the page", async () => {
    const directory = mkdtempSync(join(tmpdir(), "rein-inspector-resume-"));
    const store = new SessionStore({ path: join(directory, "runs.db"), shutdownFlush: false });
    try {
      pipelineCalls.length = 0;
      pipelineFaults.failSecondOnce = true;
      await open(resumableEntries, store);
      expect(await startRun("pipeline", "run-pipeline-1", { args: ["hi"], sessionId: "jobs" })).toMatchObject({ status: "error" });
      const failed = runRow("Pipeline.process", "error");
      await failed.getByRole("button", { name: "Resume", exact: true }).click();
      await runRow("Pipeline.process", "completed").waitFor();
      expect(store.listRuns()[0]).toMatchObject({ state: "completed" });
      expect(pipelineCalls).toEqual(["upper", "exclaim", "exclaim"]);
    } finally {
      await server?.close();
      server = undefined;
      store.close();
      rmSync(directory, { recursive: true, force: true });
    }
  });

  it("with auth, the page asks for a key once and sends it as Bearer; a read-only key shows no buttons and only its own runs", async () => {
    const keys = new InMemoryApiKeyStore();
    const reader = (await keys.create({ name: "viewer", scopes: ["read"] })).key;
    const operator = (await keys.create({ name: "operator", scopes: ["run", "read"] })).key;
    server = await serve({ app: createServer({ entries: inspectorEntries, store: new InMemorySessionStore(), reach, mintRootBudget: true, inspector: true, auth: { keys } }), resumeInterrupted: false, warn: () => undefined });
    const context = await browser.newContext({ viewport: { width: 1280, height: 800 } });
    page = await context.newPage();
    page.on("pageerror", (error) => pageErrors.push(error.message));
    const before = waitingProviders.length;
    const answer = fetch(`${server.url}/v1/agent/run`, {
      method: "POST",
      headers: { "content-type": "application/json", "x-run-id": "run-auth-1", authorization: `Bearer ${operator}` },
      body: JSON.stringify({ entry: "wait", task: "x" }),
    }).then((response) => response.json() as Promise<Record<string, unknown>>);
    while (waitingProviders.length === before) await new Promise((resolve) => setTimeout(resolve, 10));
    await waitingProviders[before]!.started;

    await page.goto(`${server.url}/inspector`);
    await page.getByLabel(/API key/).fill(reader);
    await page.getByRole("button", { name: "Use key", exact: true }).click();
    await page.getByText(/^Read-only/).waitFor();
    await page.getByText("live", { exact: true }).waitFor();
    expect(await runsTable().getByText("No runs yet.").isVisible()).toBe(true);
    for (const name of ["Stop", "Approve", "Deny", "Resume"]) expect(await page.getByRole("button", { name, exact: true }).count()).toBe(0);

    // Another key, once; a reload keeps it (sessionStorage): no second prompt.
    await page.evaluate(() => (globalThis as unknown as { sessionStorage: { clear(): void } }).sessionStorage.clear());
    await page.reload();
    await page.getByLabel(/API key/).fill(operator);
    await page.getByRole("button", { name: "Use key", exact: true }).click();
    await runRow("wait", "running").waitFor();
    await page.reload();
    await runRow("wait", "running").getByRole("button", { name: "Stop", exact: true }).click();
    expect(await page.getByLabel(/API key/).isVisible()).toBe(false);
    expect(await answer).toMatchObject({ status: "cancelled" });
    await runRow("wait", "cancelled").waitFor();
  });

  it("readable at 1280×800 and 390×844: screenshots of a run waiting for approval are kept as artifacts", async () => {
    for (const viewport of [
      { width: 1280, height: 800 },
      { width: 390, height: 844 },
    ]) {
      deployments.length = 0;
      await open(inspectorEntries, new InMemorySessionStore(), viewport);
      await startRun("quick", `run-shot-quick-${viewport.width}`);
      const answer = startRun("ship", `run-shot-${viewport.width}`);
      await runRow("ship", "running").getByRole("button", { name: "ship", exact: true }).click();
      await page.getByRole("button", { name: "Approve", exact: true }).waitFor();
      await page.getByRole("button", { name: /^llm: / }).first().click();
      // Nothing overflows the viewport sideways.
      expect(await page.evaluate(() => (globalThis as unknown as { document: { documentElement: { scrollWidth: number } } }).document.documentElement.scrollWidth)).toBeLessThanOrEqual(viewport.width);
      await page.screenshot({ path: join(ARTIFACTS, `inspector-${viewport.width}x${viewport.height}.png`), fullPage: true });
      await page.getByRole("button", { name: "Approve", exact: true }).click();
      await answer;
      await page.context().close();
      await server?.close();
      server = undefined;
    }
  });
});
