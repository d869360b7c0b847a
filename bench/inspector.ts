/**
 * The Inspector's page weight (every asset, raw and gzip) and its time to
 * first graph for a 10,000-node session: headless Chromium (Debian's, driven
 * by playwright-core) opens `/inspector?session=big` on a read-only
 * inspector over an in-memory store, and the time is taken in the page
 * (`performance.now()`, from navigation start) when the first graph node is
 * in the DOM, then when the first screen of nodes is painted. Five cold
 * page loads (each in a new browser context: no cache), after one untimed
 * load that starts the browser's own processes; min / median / max. The
 * page is served as one response (index.html with app.css and app.js
 * inlined); its weight is given both ways.
 *
 *   tsx --tsconfig tsconfig.test.json bench/inspector.ts
 */
import { join } from "node:path";
import { gzipSync } from "node:zlib";
import { InMemorySessionStore } from "rein";
import { cpus, loadavg } from "node:os";
import { createInspector, serve } from "@rein/server";
import { writeLargeSession } from "../packages/server/src/__fixtures__/large-session";
import { inspectorAsset, type InspectorAsset } from "../packages/server/src/inspector/inspector-assets";

interface Chromium {
  launch(options: { executablePath: string; args: string[] }): Promise<{
    newContext(options: { viewport: { width: number; height: number } }): Promise<{ newPage(): Promise<BenchPage>; close(): Promise<void> }>;
    close(): Promise<void>;
  }>;
}
interface BenchPage {
  addInitScript(script: string): Promise<void>;
  goto(url: string): Promise<unknown>;
  waitForSelector(selector: string): Promise<unknown>;
  evaluate<T>(fn: () => T): Promise<T>;
}

// playwright-core is a dev dependency of @rein/server, resolved from there.
const { chromium } = require(require.resolve("playwright-core", { paths: [join(__dirname, "..", "packages", "server")] })) as { chromium: Chromium };

const RUNS = 5;

async function main(): Promise<void> {
  let raw = 0;
  let gzip = 0;
  // Each file as the server serves it: app.js is the parts of assets/inspector/app joined.
  for (const file of ["index.html", "app.js", "app.css"] as InspectorAsset[]) {
    const bytes = Buffer.from(inspectorAsset(file).body);
    raw += bytes.length;
    gzip += gzipSync(bytes, { level: 9 }).length;
    console.log(`${file.padEnd(10)} ${String(bytes.length).padStart(7)} B raw ${String(gzipSync(bytes, { level: 9 }).length).padStart(6)} B gzip`);
  }
  console.log(`${"all".padEnd(10)} ${String(raw).padStart(7)} B raw ${String(gzip).padStart(6)} B gzip`);

  const store = new InMemorySessionStore();
  writeLargeSession(store, "big", 10_000);
  const server = await serve({ app: createInspector({ store }), resumeInterrupted: false, warn: () => undefined });
  const browser = await chromium.launch({
    executablePath: "/usr/bin/chromium",
    args: ["--no-sandbox", "--headless", "--disable-gpu", "--disable-background-networking", "--disable-component-update", "--no-first-run", "--disable-sync"],
  });
  // The page as /inspector serves it (one response, script and styles inline).
  const served = Buffer.from(await (await fetch(`${server.url}/inspector`)).text());
  console.log(`${"/inspector".padEnd(10)} ${String(served.length).padStart(7)} B raw ${String(gzipSync(served, { level: 9 }).length).padStart(6)} B gzip (served, inlined)`);
  const warmUp = await browser.newContext({ viewport: { width: 1280, height: 800 } });
  await (await warmUp.newPage()).goto(`${server.url}/inspector`);
  await warmUp.close();
  const firstNode: number[] = [];
  const firstScreen: number[] = [];
  try {
    for (let run = 0; run < RUNS; run++) {
      const context = await browser.newContext({ viewport: { width: 1280, height: 800 } });
      const page = await context.newPage();
      // Times are taken in the page, when the nodes enter the DOM and at the next frame: no round trip to this process counted.
      await page.addInitScript(`
        window.__marks = {};
        new MutationObserver(function () {
          if (window.__marks.first === undefined && document.querySelector("[data-node-id]")) window.__marks.first = performance.now();
          if (window.__marks.screen === undefined && document.querySelector('[data-node-id="n49"]')) {
            window.__marks.screen = -1;
            requestAnimationFrame(function () { window.__marks.screen = performance.now(); });
          }
        }).observe(document, { childList: true, subtree: true });
      `);
      await page.goto(`${server.url}/inspector?session=big`);
      await page.waitForSelector('[data-node-id="n49"]');
      const marks = () => page.evaluate(() => (globalThis as unknown as { __marks: { first: number; screen: number } }).__marks);
      while ((await marks()).screen <= 0) await new Promise((resolve) => setTimeout(resolve, 10));
      firstNode.push((await marks()).first);
      firstScreen.push((await marks()).screen);
      await context.close();
    }
  } finally {
    await browser.close();
    await server.close();
  }
  const stats = (values: number[]) => {
    const sorted = [...values].sort((a, b) => a - b);
    return `min ${sorted[0]!.toFixed(0)} ms / median ${sorted[Math.floor(sorted.length / 2)]!.toFixed(0)} ms / max ${sorted[sorted.length - 1]!.toFixed(0)} ms`;
  };
  console.log(`10,000-node session, navigation start → first graph node in the DOM: ${stats(firstNode)}`);
  console.log(`10,000-node session, navigation start → first screen (the first page, 50 nodes) painted: ${stats(firstScreen)}`);
  console.log(`load average (1, 5, 15 min) at the end: ${loadavg().map((value) => value.toFixed(1)).join(", ")} on ${cpus().length} cores`);
}

void main();
