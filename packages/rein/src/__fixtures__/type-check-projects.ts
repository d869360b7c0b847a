/**
 * What `tsc -p <tsconfig>` reports, for several tsconfig files of one project, computed in this process.
 *
 * Each tsconfig gets a program of its own and a full check of it: every file, declaration files and TypeScript's own
 * `lib.*.d.ts` included unless the tsconfig itself says otherwise, with the compiler host `tsc` uses (JSDoc parsed only
 * where it can hold a type error, as `tsc` does since TypeScript 5.3). What the programs share is parsing: a
 * declaration file that two programs read alike (same path, same language version, same module format) is parsed and
 * bound once and handed to both, as TypeScript's language service hands a file to each new program. Everything the
 * check decides — module resolution, which files are in, every diagnostic — is still each program's own: the checker
 * keeps its results beside the syntax tree, never in it.
 *
 * One process instead of a `tsc` per tsconfig: no second start of the compiler, no second parse of the declarations
 * both read (TypeScript's libs, `@types/node`, this workspace's own packages).
 *
 * {@link typeCheckProjectsInChild} runs the same in a node process of its own, started with a later tier-up to V8's
 * optimizing compiler ({@link CHECK_NODE_FLAGS}): same checks, same diagnostics, 15-20% less CPU.
 */
import { spawnSync } from "node:child_process";
import { dirname } from "node:path";
import ts from "typescript";
import { compileScript } from "../../../session/src/__fixtures__/compiled-script";

/** `.d.ts`, `.d.mts`, `.d.cts`, and `.d.<extension>.ts` (declarations for another kind of file). */
const DECLARATION_FILE = /\.d\.([^/.]+\.)?[cm]?ts$/;

/** One tsconfig's outcome: `errors` is what `tsc -p` would print (no `--pretty`), `""` when it prints nothing. */
export interface ProjectCheck {
  readonly configFile: string;
  readonly errors: string;
}

/** Type-checks each tsconfig in turn (absolute paths), sharing the parsed declaration files between the programs. */
export function typeCheckProjects(configFiles: readonly string[]): ProjectCheck[] {
  const declarations = new Map<string, ts.SourceFile>();
  return configFiles.map((configFile) => ({ configFile, errors: check(configFile, declarations) }));
}

/**
 * V8 considers a function for its optimizing compiler (TurboFan, on background threads) after it has run through this
 * much bytecode budget, about 9 times node 20's default (67,584). A type check runs for seconds through thousands of
 * the compiler's functions, and at the default V8 compiles many that run only a little longer: measured on this
 * test's two checks in a plain node process, alternating, 4 rounds at load 4-8, 19.1 / 21.8 / 24.3 s of CPU (min /
 * median / max) at the default, 16.2 / 17.3 / 19.6 s with this budget (a larger one, 1,200,000 or 2,400,000, gave the
 * same; `--max-semi-space-size`, `--single-threaded-gc`, `--no-use-osr` or `--no-turbo-inlining` beside it, nothing
 * more). It changes when code is optimized, never what it computes.
 */
const CHECK_NODE_FLAGS = ["--interrupt-budget=600000"];

/**
 * {@link typeCheckProjects} in a node process of its own (this file compiled by esbuild into `outDir`), started with
 * {@link CHECK_NODE_FLAGS}, which a running process cannot take; it also keeps the checks' heap, about 700 MB, out of
 * the test's process.
 */
export function typeCheckProjectsInChild(configFiles: readonly string[], outDir: string): ProjectCheck[] {
  const script = compileScript(__filename, outDir);
  const child = spawnSync(process.execPath, [...CHECK_NODE_FLAGS, ...script.nodeArgs, ...configFiles], {
    encoding: "utf8",
    env: { ...process.env, ...script.env },
    maxBuffer: 64 * 1024 * 1024,
  });
  if (child.status !== 0) throw new Error(`type check process failed (${child.status ?? child.signal ?? child.error?.message}): ${child.stderr}`);
  return JSON.parse(child.stdout) as ProjectCheck[];
}

if (require.main === module) process.stdout.write(JSON.stringify(typeCheckProjects(process.argv.slice(2))));

function check(configFile: string, declarations: Map<string, ts.SourceFile>): string {
  const parsed = ts.getParsedCommandLineOfConfigFile(configFile, undefined, {
    ...ts.sys,
    onUnRecoverableConfigFileDiagnostic: (diagnostic) => {
      throw new Error(`${configFile}: ${ts.flattenDiagnosticMessageText(diagnostic.messageText, "\n")}`);
    },
  })!;
  const host = ts.createCompilerHost(parsed.options);
  host.jsDocParsingMode = ts.JSDocParsingMode.ParseForTypeErrors;
  const binding = bindingOptions(parsed.options);
  const parse = host.getSourceFile.bind(host);
  host.getSourceFile = (fileName, languageVersionOrOptions, onError, shouldCreateNewSourceFile) => {
    if (!DECLARATION_FILE.test(fileName) || shouldCreateNewSourceFile === true) {
      return parse(fileName, languageVersionOrOptions, onError, shouldCreateNewSourceFile);
    }
    // A declaration file's tree depends on its language version and module format alone (whether it is a module is
    // read from its own imports and exports, whatever the tsconfig's module setting), and on the JSDoc mode, the same
    // for all; its binding on the options bindingOptions names.
    const { languageVersion, impliedNodeFormat } =
      typeof languageVersionOrOptions === "object" ? languageVersionOrOptions : { languageVersion: languageVersionOrOptions, impliedNodeFormat: undefined };
    const key = `${fileName}\0${languageVersion}\0${impliedNodeFormat}\0${binding}`;
    let file = declarations.get(key);
    if (file === undefined) {
      file = parse(fileName, languageVersionOrOptions, onError);
      if (file !== undefined) declarations.set(key, file);
    }
    return file;
  };
  const program = ts.createProgram({
    rootNames: parsed.fileNames,
    options: parsed.options,
    projectReferences: parsed.projectReferences,
    host,
    configFileParsingDiagnostics: ts.getConfigFileParsingDiagnostics(parsed),
  });
  return ts.formatDiagnostics(ts.getPreEmitDiagnostics(program), {
    getCanonicalFileName: (fileName) => fileName,
    getCurrentDirectory: () => dirname(configFile),
    getNewLine: () => "\n",
  });
}

/** The compiler options TypeScript's binder reads (its strict mode, unreachable code, unused labels, fall-through and const enum checks). */
function bindingOptions(options: ts.CompilerOptions): string {
  const { strict, alwaysStrict, allowUnreachableCode, allowUnusedLabels, noFallthroughCasesInSwitch, preserveConstEnums, isolatedModules, verbatimModuleSyntax } = options;
  return JSON.stringify([strict, alwaysStrict, allowUnreachableCode, allowUnusedLabels, noFallthroughCasesInSwitch, preserveConstEnums, isolatedModules, verbatimModuleSyntax]);
}
