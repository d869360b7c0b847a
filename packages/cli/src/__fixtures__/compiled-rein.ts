/**
 * The `rein` command compiled once per jest run (once per caller outside one), laid out as an install of the built
 * packages, for tests that start it as real processes. Started from source (`node --require tsx/cjs bin.ts`), each
 * `rein` process and each run's child loads and transforms hundreds of source files through tsx: about 1.15 s of CPU
 * for a `rein run`. From this build a `rein run` costs about 0.8 s, and it takes the path a user's install takes:
 * `bin.js` starts `run-child.js` beside it, and a TypeScript module is loaded through tsx's hook, found from the
 * module's folder.
 *
 * Every workspace package is bundled by esbuild (the compiler tsx runs on, with tsx's `keepNames`) into
 * `node_modules/<name>/dist/index.js` with its `package.json` and `assets/`, the other workspace packages left
 * outside its bundle, as they are outside its `dist/`: each package is loaded once per process, as from an install.
 * `@rein/cli` also gets its two process entry points, `dist/bin.js` and `dist/run-child.js`. A source file that
 * reads `__dirname` or `__filename` gets the values its compiled file has in the package's `dist/` (tsc's layout)
 * rather than the bundle's: `@rein/server` finds its Inspector assets as a built server does.
 *
 * Third-party packages stay outside the bundles and are found through `NODE_PATH` (compiled-script.ts in
 * `@rein/session`'s fixtures). A module the test hands to `rein` (`examples/*.ts`) imports `rein` by name: the
 * tsconfig written beside the build (`TSX_TSCONFIG_PATH`) maps that name to the build, so the module and `rein`
 * share one copy of each package.
 */
import { cpSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, renameSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join, relative } from "node:path";
import { build, type Plugin } from "esbuild";
import { compiledScriptEnv, WORKSPACE_BUNDLE } from "../../../session/src/__fixtures__/compiled-script";

const ROOT = join(__dirname, "..", "..", "..", "..");
const PACKAGES = join(ROOT, "packages");

/** A build of `rein` in a scratch directory. */
export interface CompiledRein {
  /** `node` and the arguments that start `rein`: append the command's own (`run`, `serve`, …). */
  readonly command: readonly string[];
  /** What a `rein` process's environment needs besides the caller's: `NODE_PATH` and `TSX_TSCONFIG_PATH`. */
  readonly env: Readonly<Record<string, string>>;
  /** Deletes a build made for this caller alone; a build the jest run shares is left to the run's teardown. */
  remove(): void;
}

/** Gives a source file under `packages/<name>/src` the `__dirname` and `__filename` its compiled file has in `outDir`. */
function distPaths(sourceDir: string, outDir: string): Plugin {
  return {
    name: "dist-paths",
    setup(plugin) {
      plugin.onLoad({ filter: /\.ts$/ }, (args) => {
        const source = readFileSync(args.path, "utf8");
        if (!/\b__(dirname|filename)\b/.test(source)) return undefined;
        const compiled = join(outDir, relative(sourceDir, args.path)).replace(/\.ts$/, ".js");
        // On the first line, so the file's own lines keep their numbers.
        const paths = `var __dirname = ${JSON.stringify(dirname(compiled))}, __filename = ${JSON.stringify(compiled)}; `;
        return { contents: paths + source, loader: "ts" };
      });
    },
  };
}

async function bundlePackage(name: string, into: string): Promise<void> {
  const source = join(PACKAGES, name);
  const manifest = JSON.parse(readFileSync(join(source, "package.json"), "utf8")) as { name: string };
  const target = join(into, "node_modules", manifest.name);
  mkdirSync(target, { recursive: true });
  cpSync(join(source, "package.json"), join(target, "package.json"));
  if (existsSync(join(source, "assets"))) symlinkSync(join(source, "assets"), join(target, "assets"));
  const entries = name === "cli" ? ["index", "bin", "run-child"] : ["index"];
  await build({
    entryPoints: entries.map((entry) => join(source, "src", `${entry}.ts`)),
    ...WORKSPACE_BUNDLE,
    outdir: join(target, "dist"),
    // The other workspace packages are required at run time too, from their own builds.
    external: ["rein", "@rein/*"],
    plugins: [distPaths(join(source, "src"), join(target, "dist"))],
    logLevel: "silent",
  });
}

/** Compiles every workspace package into `dir` and writes the tsconfig that maps `rein` and `@rein/*` to the build. */
async function compileInto(dir: string): Promise<void> {
  await Promise.all(readdirSync(PACKAGES).map((name) => bundlePackage(name, dir)));
  writeFileSync(
    join(dir, "tsconfig.json"),
    JSON.stringify({
      extends: join(ROOT, "tsconfig.test.json"),
      compilerOptions: { baseUrl: ".", paths: { rein: ["node_modules/rein/dist/index.js"], "@rein/*": ["node_modules/@rein/*/dist/index.js"] } },
    }),
  );
}

function compiledIn(dir: string, remove: () => void): CompiledRein {
  return {
    command: [process.execPath, join(dir, "node_modules", "@rein", "cli", "dist", "bin.js")],
    env: { ...compiledScriptEnv(), TSX_TSCONFIG_PATH: join(dir, "tsconfig.json") },
    remove,
  };
}

/**
 * Compiles every workspace package (about 0.3 s of CPU) and says how to start `rein` from the build; esbuild
 * rejects, naming the file and line, when a source does not compile. Inside a jest run (`REIN_TEST_RUN_DIR`, made
 * by jest.global-setup.js) the first file to ask builds into the run's directory and names the finished build in
 * `compiled-rein.json` there; later files use it (the sources do not change during a run; two files that ask at
 * once each build, and either build serves). Outside a jest run each call builds into a new scratch directory.
 * @example
 * ```ts
 * const rein = await compileRein();
 * spawn(rein.command[0]!, [...rein.command.slice(1), "run", "examples/cli-chain.ts#plan", "--task", "x"], { env: { ...process.env, ...rein.env } });
 * ```
 */
export async function compileRein(): Promise<CompiledRein> {
  const runDir = process.env["REIN_TEST_RUN_DIR"];
  if (runDir === undefined || runDir === "") {
    const dir = mkdtempSync(join(tmpdir(), "rein-compiled-"));
    await compileInto(dir);
    return compiledIn(dir, () => rmSync(dir, { recursive: true, force: true }));
  }
  const named = join(runDir, "compiled-rein.json");
  if (existsSync(named)) return compiledIn((JSON.parse(readFileSync(named, "utf8")) as { dir: string }).dir, () => undefined);
  const dir = mkdtempSync(join(runDir, "compiled-rein-"));
  await compileInto(dir);
  // Named only once complete (a rename replaces the name at once), so a file never sees half a build.
  writeFileSync(`${named}.${process.pid}`, JSON.stringify({ dir }));
  renameSync(`${named}.${process.pid}`, named);
  return compiledIn(dir, () => undefined);
}
