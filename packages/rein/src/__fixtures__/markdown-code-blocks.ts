import { readFileSync, readdirSync } from "node:fs";
import { join, relative } from "node:path";

/**
 * What the docs test does with a code block, from the HTML comment on the
 * nearest non-blank line above its opening fence (docs/contributing-docs.md):
 * - no marker: a TypeScript block is type-checked as a module of its own;
 * - `<!-- fragment -->` (optionally `<!-- fragment: why -->`): not checked;
 * - `<!-- run -->`: type-checked, then run with tsx and must exit 0;
 * - `<!-- run-server -->`: type-checked, then run with `PORT=0` until it
 *   prints `listening on`, sent SIGTERM, and must exit 0.
 */
export type BlockMode = "check" | "fragment" | "run" | "run-server";

/** One fenced code block of a Markdown file. */
export interface CodeBlock {
  /** The file, relative to the repository root. */
  readonly file: string;
  /** 1-based line of the opening fence. */
  readonly line: number;
  /** The fence's info string, lower-cased (`ts`, `sh`, `text`, `""` when none). */
  readonly language: string;
  readonly mode: BlockMode;
  readonly code: string;
}

const FENCE = /^(\s*)(`{3,}|~{3,})\s*([^\s`]*)[^`]*$/;
const MARKER = /^<!--\s*(fragment|run-server|run)\b[^>]*-->\s*$/;

/** README.md and every Markdown file under docs/, relative to `root`, sorted. */
export function documentationFiles(root: string): string[] {
  const found = ["README.md"];
  const walk = (directory: string): void => {
    for (const entry of readdirSync(join(root, directory), { withFileTypes: true })) {
      const path = join(directory, entry.name);
      if (entry.isDirectory()) walk(path);
      else if (entry.name.endsWith(".md")) found.push(path);
    }
  };
  walk("docs");
  return found.sort();
}

/** Every fenced block of `file` (relative to `root`), with its marker. An unclosed fence throws. */
export function codeBlocks(root: string, file: string): CodeBlock[] {
  const lines = readFileSync(join(root, file), "utf8").split("\n");
  const blocks: CodeBlock[] = [];
  for (let index = 0; index < lines.length; index++) {
    const opening = FENCE.exec(lines[index]!);
    if (opening === null) continue;
    const [, indent, fence, info] = opening as unknown as [string, string, string, string];
    let end = index + 1;
    while (end < lines.length && !new RegExp(`^\\s*${fence[0] === "`" ? "`" : "~"}{${fence.length},}\\s*$`).test(lines[end]!)) end++;
    if (end >= lines.length) throw new Error(`${relative(root, join(root, file))}:${index + 1}: a code fence is never closed`);
    let above = index - 1;
    while (above >= 0 && lines[above]!.trim() === "") above--;
    const marker = above >= 0 ? MARKER.exec(lines[above]!.trim()) : null;
    blocks.push({
      file,
      line: index + 1,
      language: info.toLowerCase(),
      mode: marker === null ? "check" : (marker[1] as BlockMode),
      code: lines
        .slice(index + 1, end)
        .map((line) => (line.startsWith(indent) ? line.slice(indent.length) : line))
        .join("\n"),
    });
    index = end;
  }
  return blocks;
}
