import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { Script } from "node:vm";
import { InMemorySessionStore } from "rein";
import { createInspector } from "./create-inspector";
import { INSPECTOR_APP_PARTS, INSPECTOR_ASSET_DIR } from "./inspector-assets";

const APP_DIR = join(INSPECTOR_ASSET_DIR, "app");

describe("the Inspector's script, kept in parts under assets/inspector/app", () => {
  it("GET /inspector/app.js serves every part once, in the listed order, as one script that parses", async () => {
    const app = createInspector({ store: new InMemorySessionStore() });
    const response = await app.request("/inspector/app.js");
    expect(response.status).toBe(200);
    expect(response.headers.get("content-type")).toBe("text/javascript; charset=utf-8");
    const served = await response.text();
    // No part of the folder is left out of the list.
    expect(readdirSync(APP_DIR).filter((file) => file.endsWith(".js")).sort()).toEqual([...INSPECTOR_APP_PARTS].sort());
    let from = 0;
    for (const part of INSPECTOR_APP_PARTS) {
      const text = readFileSync(join(APP_DIR, part), "utf8");
      const at = served.indexOf(text, from);
      expect({ part, found: at >= from }).toEqual({ part, found: true });
      from = at + text.length;
    }
    expect(served.startsWith("// Rein Inspector")).toBe(true);
    // The parts share one object, created first and started last.
    expect(served.indexOf("window.reinInspector = {")).toBeLessThan(served.indexOf("(window.reinInspector)"));
    expect(() => new Script(served, { filename: "app.js" })).not.toThrow();
  });

  it("GET /inspector is one response: the script is inlined, not asked for", async () => {
    const app = createInspector({ store: new InMemorySessionStore() });
    const page = await (await app.request("/inspector")).text();
    const script = await (await app.request("/inspector/app.js")).text();
    expect(page).toContain(`<script>\n${script}</script>\n</body>`);
    expect(page).not.toContain('src="/inspector/app.js"');
  });
});
