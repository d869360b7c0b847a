import { readFileSync } from "node:fs";
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

const cache = new Map<InspectorAsset, { body: string; type: string }>();

/** One of the page's files, read once. @internal */
export function inspectorAsset(file: InspectorAsset): { body: string; type: string } {
  let asset = cache.get(file);
  if (asset === undefined) {
    asset = { body: readFileSync(join(INSPECTOR_ASSET_DIR, file), "utf8"), type: TYPES[file] };
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
