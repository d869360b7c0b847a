import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";

/** The files of the Inspector page. @internal */
export type InspectorAsset = "index.html" | "app.js" | "app.css";

const TYPES: Readonly<Record<InspectorAsset, string>> = {
  "index.html": "text/html; charset=utf-8",
  "app.js": "text/javascript; charset=utf-8",
  "app.css": "text/css; charset=utf-8",
};

/**
 * Where the page's files are: `assets/inspector` of `@rein/server`, reached
 * the same way from `src/inspector` (tests) and `dist/inspector` (built).
 * @internal
 */
export const INSPECTOR_ASSET_DIR = join(__dirname, "..", "..", "assets", "inspector");

/**
 * The files of `assets/inspector/app` that `app.js` is made of, in the order
 * they are joined. The first creates the page's one shared object,
 * `window.reinInspector`; each later one adds its functions to it; the last
 * starts the page. Plain scripts joined as they are: no module loader, no
 * build step, and still one script in the page.
 * @internal
 */
export const INSPECTOR_APP_PARTS: readonly string[] = [
  "inspector.js",
  "format.js",
  "runs-table.js",
  "steering.js",
  "selected-run.js",
  "graph.js",
  "graph-marks.js",
  "node-detail.js",
  "runs-feed.js",
  "boot.js",
];

const cache = new Map<InspectorAsset, { body: string; type: string }>();

/**
 * `app.js`: the parts joined in order. A part in the folder but not in the
 * list would silently be left out of the page, so it is an error here.
 */
function readApp(): string {
  const folder = join(INSPECTOR_ASSET_DIR, "app");
  const unlisted = readdirSync(folder).filter((file) => file.endsWith(".js") && !INSPECTOR_APP_PARTS.includes(file));
  if (unlisted.length > 0) {
    throw new Error(`the Inspector's ${folder} holds ${unlisted.join(", ")}, which app.js would leave out: add it to INSPECTOR_APP_PARTS (inspector-assets.ts) where it belongs in the order`);
  }
  return INSPECTOR_APP_PARTS.map((part) => readFileSync(join(folder, part), "utf8")).join("\n");
}

/** One of the page's files, read once. @internal */
export function inspectorAsset(file: InspectorAsset): { body: string; type: string } {
  let asset = cache.get(file);
  if (asset === undefined) {
    asset = { body: file === "app.js" ? readApp() : readFileSync(join(INSPECTOR_ASSET_DIR, file), "utf8"), type: TYPES[file] };
    cache.set(file, asset);
  }
  return asset;
}

let page: string | undefined;

/**
 * The page as `/inspector` serves it: `index.html` with `app.css` and
 * `app.js` inlined (a `<style>` in the head, the script at the end of the
 * body, where the deferred one ran), built once. One response instead of
 * three before the page can ask for its data: the first graph of a large
 * session is on screen one round trip sooner. The files stay served on
 * their own paths too.
 * @internal
 */
export function inspectorPage(): string {
  if (page !== undefined) return page;
  const html = inspectorAsset("index.html").body;
  const style = '<link rel="stylesheet" href="/inspector/app.css">';
  const script = '<script src="/inspector/app.js" defer></script>';
  if (!html.includes(style) || !html.includes(script) || !html.includes("</body>")) {
    throw new Error(`the Inspector's index.html (${INSPECTOR_ASSET_DIR}) lost its ${style} or ${script}: they are inlined from there`);
  }
  // A function replacement: "$&" and friends in the assets stay as they are.
  page = html
    .replace(style, () => `<style>\n${inspectorAsset("app.css").body}</style>`)
    .replace(script, () => "")
    .replace("</body>", () => `<script>\n${inspectorAsset("app.js").body}</script>\n</body>`);
  return page;
}
