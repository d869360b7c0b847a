import type { Browser, Page } from "playwright-core";
import { launchHeadlessChromium } from "../__fixtures__/headless-chromium";
import { Agent, Context, InMemorySessionStore, Runtime, ScriptedProvider } from "rein";
import { serve, type RunningServer } from "../serve";
import { createInspector } from "./create-inspector";
import { writeLargeSession } from "../__fixtures__/large-session";

class Writer extends Agent {
  static runtime = new Runtime({ provider: new ScriptedProvider(["a draft"], { whenExhausted: "repeat-last" }) });
  async draft(topic: string): Promise<string> {
    return this.ask(`write about ${topic}`);
  }
}

let browser: Browser;
let server: RunningServer;
let page: Page;
const pageErrors: string[] = [];
const store = new InMemorySessionStore();

beforeAll(async () => {
  await new Writer({ context: Context.forSession(store, "essay") }).draft("rivers");
  writeLargeSession(store, "big", 10_000);
  server = await serve({ app: createInspector({ store }), resumeInterrupted: false, warn: () => undefined });
  browser = await launchHeadlessChromium();
});
afterAll(async () => {
  await browser?.close();
  await server?.close();
});
beforeEach(async () => {
  page = await (await browser.newContext({ viewport: { width: 1280, height: 800 } })).newPage();
  page.on("pageerror", (error) => pageErrors.push(error.message));
  await page.goto(`${server.url}/inspector`);
  await page.getByText(/^Read-only/).waitFor();
});
afterEach(async () => {
  await page.context().close();
  expect(pageErrors).toEqual([]);
});

describe("the read-only Inspector (rein inspect) in headless Chromium", () => {
  it("lists recorded sessions; a session's graph shows its named code and llm nodes; there are no buttons to steer", async () => {
    await page.getByRole("table", { name: "Sessions" }).getByRole("button", { name: "essay", exact: true }).click();
    await page.getByRole("button", { name: "code: Writer.draft (completed)", exact: true }).waitFor();
    await page.getByRole("button", { name: "llm: scripted (completed)", exact: true }).waitFor();
    for (const name of ["Stop", "Approve", "Deny", "Resume"]) expect(await page.getByRole("button", { name, exact: true }).count()).toBe(0);
  });

  it("a 10,000-node session shows its first page of nodes, and loads the rest lazily as it scrolls", async () => {
    await page.getByRole("table", { name: "Sessions" }).getByRole("button", { name: "10000 nodes", exact: true }).click();
    await page.getByRole("button", { name: "code: Planner.plan (completed)", exact: true }).waitFor();
    // A screenful and more first (50 rows fill the 800 px twice) ...
    await page.getByText("50 of 10000 nodes shown").waitFor();
    expect(await page.locator("[data-node-id]").count()).toBe(50);
    // One response carries the page (its script and styles inline): what it fetched besides is data.
    const fetched = await page.evaluate(() => (globalThis as unknown as { performance: { getEntriesByType(type: string): { name: string }[] } }).performance.getEntriesByType("resource").map((entry) => new URL(entry.name).pathname));
    expect(fetched.filter((path) => !path.startsWith("/inspector/api/") && path !== "/favicon.ico")).toEqual([]);
    // Scrolling to the end of the list loads the next page.
    await page.getByRole("button", { name: "Load more nodes", exact: true }).scrollIntoViewIfNeeded();
    // ... then pages of 200 as the list scrolls.
    await page.getByText("250 of 10000 nodes shown").waitFor();
    const last = page.locator("[data-node-id]").last();
    expect(await last.getAttribute("data-node-id")).toBe("n249");
    expect(await last.getAttribute("aria-label")).toBe("llm: scripted (completed)");
  });

  it("a link to a session (/inspector?session=<id>) opens its graph; its first page is asked for once, by the page's head, while the rest is parsed", async () => {
    await page.goto(`${server.url}/inspector?session=big`);
    await page.getByText("50 of 10000 nodes shown").waitFor();
    expect(await page.locator("[data-node-id]").first().getAttribute("aria-label")).toBe("code: Planner.plan (completed)");
    const fetched = await page.evaluate(() => (globalThis as unknown as { performance: { getEntriesByType(type: string): { name: string }[] } }).performance.getEntriesByType("resource").map((entry) => new URL(entry.name).pathname + new URL(entry.name).search));
    expect(fetched.filter((path) => path === "/inspector/api/sessions/big/nodes?after=-1&limit=50")).toHaveLength(1);
  });
});
