/**
 * Docs that cannot rot: every TypeScript block of README.md and docs/**\/*.md
 * is type-checked as a module of its own (strict, CommonJS, `rein` and
 * `@rein/*` resolved to this repository's sources), and the blocks marked
 * `<!-- run -->` / `<!-- run-server -->` are run with tsx, with no API key in
 * the environment. A block marked `<!-- fragment -->` is skipped; a block
 * with no language is an error, so code cannot hide from the check. The
 * markers are documented in docs/contributing-docs.md.
 */
import { spawn } from "node:child_process";
import { mkdtempSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import ts from "typescript";
import { codeBlocks, documentationFiles, type CodeBlock } from "./__fixtures__/markdown-code-blocks";

const ROOT = resolve(__dirname, "..", "..", "..");
const TYPESCRIPT = new Set(["ts", "typescript"]);
/** Languages that are not code the test can check: shell sessions, terminal output, config files, diagrams. */
const NOT_CHECKED = new Set(["sh", "bash", "text", "yaml", "json", "mermaid", "dot", "http", "diff"]);

const blocks = documentationFiles(ROOT).flatMap((file) => codeBlocks(ROOT, file));
const typescriptBlocks = blocks.filter((block) => TYPESCRIPT.has(block.language) && block.mode !== "fragment");
const where = (block: CodeBlock): string => `${block.file}:${block.line}`;
/** A file name per block, inside the repository so that it resolves like the repository's own modules. */
const virtualPath = (block: CodeBlock): string => join(ROOT, "docs", ".blocks", `${block.file.replace(/[^A-Za-z0-9]+/g, "_")}_${block.line}.ts`);

/**
 * zod as this repository installed it (a dependency of the MCP SDK, not
 * hoisted): the docs' zod blocks are checked against the real package.
 */
function zodDirectory(): string {
  const store = join(ROOT, "node_modules", ".pnpm");
  const found = readdirSync(store).filter((name) => /^zod@\d/.test(name)).sort();
  if (found.length === 0) throw new Error(`zod is not installed under ${store}: the docs' zod blocks cannot be checked`);
  return join(store, found.at(-1)!, "node_modules", "zod");
}

/** Type-checks every block in one program; returns the formatted errors of each block that has some. */
function typeCheck(checked: readonly CodeBlock[]): Map<string, string> {
  const config = ts.getParsedCommandLineOfConfigFile(join(ROOT, "tsconfig.test.json"), {}, {
    ...ts.sys,
    onUnRecoverableConfigFileDiagnostic: (diagnostic) => {
      throw new Error(ts.flattenDiagnosticMessageText(diagnostic.messageText, "\n"));
    },
  })!;
  // What a reader's project sees: node's types, not jest's globals; zod (which the docs use for schemas) from this repository's install.
  const options: ts.CompilerOptions = {
    ...config.options,
    noEmit: true,
    types: ["node"],
    incremental: false,
    tsBuildInfoFile: undefined,
    paths: { ...config.options.paths, zod: [zodDirectory()] },
  };
  const sources = new Map(checked.map((block) => [virtualPath(block), `${block.code}\nexport {};\n`]));
  const host = ts.createCompilerHost(options);
  // As tsc parses: JSDoc only where it can hold a type error (the sources' TSDoc is not parsed for nothing).
  host.jsDocParsingMode = ts.JSDocParsingMode.ParseForTypeErrors;
  const readFile = host.readFile.bind(host);
  const fileExists = host.fileExists.bind(host);
  const getSourceFile = host.getSourceFile.bind(host);
  host.readFile = (name) => sources.get(name) ?? readFile(name);
  host.fileExists = (name) => sources.has(name) || fileExists(name);
  host.getSourceFile = (name, language, onError, fresh) => {
    const text = sources.get(name);
    return text === undefined ? getSourceFile(name, language, onError, fresh) : ts.createSourceFile(name, text, language, true);
  };
  const program = ts.createProgram([...sources.keys()], options, host);
  const failures = new Map<string, string>();
  for (const block of checked) {
    const file = program.getSourceFile(virtualPath(block))!;
    const diagnostics = [...program.getSyntacticDiagnostics(file), ...program.getSemanticDiagnostics(file)];
    if (diagnostics.length === 0) continue;
    failures.set(
      where(block),
      diagnostics
        .map((diagnostic) => {
          const { line } = file.getLineAndCharacterOfPosition(diagnostic.start ?? 0);
          return `  line ${block.line + 1 + line}: TS${diagnostic.code} ${ts.flattenDiagnosticMessageText(diagnostic.messageText, " ")}`;
        })
        .join("\n"),
    );
  }
  return failures;
}

/** The environment of a reader without keys: nothing reaches a real model. */
function runEnvironment(): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const [key, value] of Object.entries(process.env)) {
    if (!/^(ANTHROPIC_|OPENAI_|REIN_|JEST_|NODE_OPTIONS$|TSX_)/.test(key)) env[key] = value;
  }
  return { ...env, TSX_TSCONFIG_PATH: join(ROOT, "tsconfig.test.json") };
}

/** Runs one block with tsx in a scratch directory; a `run-server` block is stopped with SIGTERM once it listens. */
function runBlock(block: CodeBlock): Promise<{ code: number | null; signal: NodeJS.Signals | null; output: string }> {
  const directory = mkdtempSync(join(tmpdir(), "rein-doc-block-"));
  const file = join(directory, "block.ts");
  writeFileSync(file, `${block.code}\nexport {};\n`);
  return new Promise((done) => {
    const child = spawn(process.execPath, ["--require", require.resolve("tsx/cjs"), file], {
      cwd: directory,
      env: { ...runEnvironment(), PORT: "0" },
      stdio: ["ignore", "pipe", "pipe"],
    });
    let output = "";
    const killer = setTimeout(() => child.kill("SIGKILL"), 90_000);
    const onOutput = (chunk: Buffer): void => {
      output += chunk.toString();
      if (block.mode === "run-server" && /listening on http/.test(output) && child.exitCode === null && !child.killed) child.kill("SIGTERM");
    };
    child.stdout.on("data", onOutput);
    child.stderr.on("data", onOutput);
    child.once("close", (code, signal) => {
      clearTimeout(killer);
      rmSync(directory, { recursive: true, force: true });
      done({ code, signal, output });
    });
  });
}

describe("docs that cannot rot: the code blocks of README.md and docs/", () => {
  it("finds the blocks (README and docs/ hold TypeScript blocks; some are run)", () => {
    expect(typescriptBlocks.length).toBeGreaterThan(15);
    expect(typescriptBlocks.some((block) => block.file === "README.md")).toBe(true);
    expect(blocks.some((block) => block.mode === "run")).toBe(true);
    expect(blocks.some((block) => block.mode === "run-server")).toBe(true);
  });

  it("every block names its language, one the test knows (TypeScript is checked; shell, output and config are not code it can check)", () => {
    const unknown = blocks.filter((block) => !TYPESCRIPT.has(block.language) && !NOT_CHECKED.has(block.language)).map((block) => `${where(block)} \`\`\`${block.language}`);
    expect(unknown).toEqual([]);
    const misplaced = blocks.filter((block) => block.mode.startsWith("run") && !TYPESCRIPT.has(block.language)).map(where);
    expect(misplaced).toEqual([]);
  });

  it("every JSON block parses", () => {
    const broken = blocks
      .filter((block) => block.language === "json")
      .flatMap((block) => {
        try {
          JSON.parse(block.code);
          return [];
        } catch (error) {
          return [`${where(block)}: ${(error as Error).message}`];
        }
      });
    expect(broken).toEqual([]);
  });

  it("every TypeScript block not marked <!-- fragment --> type-checks as a module of its own (strict, CommonJS like a new project)", () => {
    const failures = typeCheck(typescriptBlocks);
    const report = [...failures].map(([block, errors]) => `${block}\n${errors}`).join("\n");
    expect(report).toBe("");
  }, 180_000);

  const runnable = typescriptBlocks.filter((block) => block.mode === "run" || block.mode === "run-server");
  it.each(runnable.map((block) => [where(block), block] as const))("%s runs to exit 0 with no API key (ScriptedProvider, no network)", async (_where, block) => {
    const { code, signal, output } = await runBlock(block);
    expect({ code, signal, output: code === 0 ? "" : output }).toEqual({ code: 0, signal: null, output: "" });
  }, 120_000);
});
