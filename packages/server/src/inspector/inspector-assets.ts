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
