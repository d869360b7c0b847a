/**
 * A TypeScript script of this monorepo compiled once into one JavaScript file, for tests that start many child
 * processes running it. A child started with `node --import tsx script.ts` loads and transforms hundreds of source
 * files through tsx's hooks: about 1.6 s of CPU before it does anything. The same script bundled by esbuild (the
 * transformer tsx itself uses, so the code that runs is the same) starts in about 0.7 s.
 *
 * Workspace packages (`@rein/*`, `rein`) are bundled from their sources through tsconfig.test.json's `paths`, as tsx
 * maps them; third-party packages stay outside the bundle and are found through `NODE_PATH` in the workspace
 * packages' own `node_modules` (a bundle in a scratch directory has no `node_modules` of its own).
 */
import { readdirSync } from "node:fs";
import { delimiter, join } from "node:path";
import { buildSync } from "esbuild";

const ROOT = join(__dirname, "..", "..", "..", "..");

/** A compiled script: run it with `node ...nodeArgs <args>` in an environment that includes `env`. */
export interface CompiledScript {
  /** The bundle's path. */
  readonly file: string;
  /** The node arguments that run it (source maps on, so a child's stack names the `.ts` lines). */
  readonly nodeArgs: readonly string[];
  /** What the child's environment needs besides the caller's: `NODE_PATH` to the workspace's dependencies. */
  readonly env: Readonly<Record<string, string>>;
}

/**
 * How workspace TypeScript is bundled for a child process, here and in the CLI tests' build (`compiled-rein.ts`):
 * CommonJS for Node 20, `paths` from tsconfig.test.json, third-party packages left outside the bundle.
 */
export const WORKSPACE_BUNDLE = {
  bundle: true,
  platform: "node",
  format: "cjs",
  target: "node20",
  tsconfig: join(ROOT, "tsconfig.test.json"),
  packages: "external",
  // As tsx does: a class renamed in the bundle (two `Worker`s) keeps its `.name`, which names its nodes.
  keepNames: true,
} as const;

/** Bundles `entry` (a `.ts` file) into `outDir` as one CommonJS file; esbuild throws, naming the file and line, when it does not compile. */
export function compileScript(entry: string, outDir: string): CompiledScript {
  const file = join(outDir, `${entry.split(/[\\/]/).pop()!.replace(/\.ts$/, "")}.js`);
  buildSync({
    ...WORKSPACE_BUNDLE,
    entryPoints: [entry],
    outfile: file,
    sourcemap: "inline",
    sourcesContent: false,
    logLevel: "silent",
  });
  return { file, nodeArgs: ["--enable-source-maps", file], env: compiledScriptEnv() };
}

/** The environment a process running compiled workspace code needs: `NODE_PATH` to the workspace packages' third-party dependencies. */
export function compiledScriptEnv(): Record<string, string> {
  const packages = join(ROOT, "packages");
  const modules = [
    ...readdirSync(packages).map((name) => join(packages, name, "node_modules")),
    join(ROOT, "node_modules"),
  ];
  return { NODE_PATH: modules.join(delimiter) };
}
