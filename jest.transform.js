/**
 * Jest's TypeScript transform. esbuild (the compiler tsx runs on, so a test runs the code a user's `tsx` would)
 * turns each file into CommonJS in about a tenth of the CPU TypeScript's own transpiler takes — on a fresh clone,
 * where nothing is cached yet, tens of seconds of the test run (docs/testing.md). A file that uses decorators goes through
 * TypeScript's `transpileModule` instead: esbuild emits no decorator metadata, which `@method` reads parameter types
 * from. Neither checks types; `pnpm typecheck` does.
 */
const { createHash } = require("node:crypto");
const { readFileSync } = require("node:fs");

const ESBUILD_VERSION = require("esbuild/package.json").version;
const TYPESCRIPT_VERSION = require("typescript/package.json").version;
const SELF = createHash("sha256").update(readFileSync(__filename)).digest("hex");

/** A decorator at the start of a line (`@method(...)` above a method): only those files need TypeScript. */
const DECORATOR = /^\s*@[A-Za-z_$][\w$]*(\(|\s*$)/m;

let esbuild;
let typescript;

/**
 * What tsconfig.base.json sets that changes emitted code (esbuild reads no tsconfig file in this mode): a copy, so
 * a change there that affects emitted code must be made here too (and in {@link withTypeScript}).
 */
const TSCONFIG_RAW = { compilerOptions: { target: "ES2022", useDefineForClassFields: true, experimentalDecorators: true, esModuleInterop: true } };

function withEsbuild(source, path) {
  esbuild ??= require("esbuild");
  const { code, map } = esbuild.transformSync(source, {
    loader: "ts",
    format: "cjs",
    target: "node20",
    platform: "node",
    sourcefile: path,
    // As tsx does: a renamed binding (two class expressions named Job in one file) keeps its `.name`.
    keepNames: true,
    sourcemap: "external",
    sourcesContent: false,
    tsconfigRaw: TSCONFIG_RAW,
  });
  // An object, not JSON text: coverage (istanbul) applies only a map it is given as an object.
  return { code, map: JSON.parse(map) };
}

function withTypeScript(source, path) {
  typescript ??= require("typescript");
  const { outputText, sourceMapText } = typescript.transpileModule(source, {
    fileName: path,
    compilerOptions: {
      module: typescript.ModuleKind.CommonJS,
      target: typescript.ScriptTarget.ES2022,
      esModuleInterop: true,
      experimentalDecorators: true,
      emitDecoratorMetadata: true,
      sourceMap: true,
      inlineSources: false,
    },
  });
  return { code: outputText.replace(/\n\/\/# sourceMappingURL=.*$/, ""), map: JSON.parse(sourceMapText) };
}

module.exports = {
  process(source, path) {
    return DECORATOR.test(source) ? withTypeScript(source, path) : withEsbuild(source, path);
  },
  getCacheKey(source, path, options) {
    // jest adds coverage instrumentation after the transform and keys on none of it when a transformer has its own key.
    const instrument = options?.instrument === true ? "instrumented" : "plain";
    return createHash("sha256").update(SELF).update(ESBUILD_VERSION).update(TYPESCRIPT_VERSION).update(instrument).update(path).update("\0").update(source).digest("hex");
  },
};
