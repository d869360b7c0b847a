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
 */
import { dirname } from "node:path";
import ts from "typescript";

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
