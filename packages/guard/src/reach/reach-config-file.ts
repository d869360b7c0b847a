/**
 * Reading a reach config file: where it is, its text, and the policy
 * options it gives for an environment — the whole file validated, each
 * problem a {@link ReachConfigError} naming the key, the value and where.
 * @internal
 */
import { readFileSync } from "node:fs";
import { resolve } from "node:path";
import type { Document } from "yaml";
import type { ReachPolicyOptions } from "./reach-budget";
import { ReachConfigError } from "./reach-config-error";

let yamlModule: typeof import("yaml") | undefined;
/** The YAML parser, loaded on the first config read: importing Rein does not pay for it (~18 ms). */
function yaml(): typeof import("yaml") {
  return (yamlModule ??= require("yaml") as typeof import("yaml"));
}

/** Where {@link loadReachConfig} looks when given no path and `REIN_REACH_CONFIG` is unset, relative to `process.cwd()`. */
export const DEFAULT_REACH_CONFIG_PATH = "config/reach.yaml";

type Field = { readonly option: keyof ReachPolicyOptions; readonly expected: string; readonly valid: (value: unknown) => boolean };

const positive = (integer: boolean) => (value: unknown): boolean =>
  typeof value === "number" && (value === Infinity || (Number.isFinite(value) && value > 0 && (!integer || Number.isInteger(value))));

const FIELDS: Readonly<Record<string, Field>> = {
  max_logic_depth: { option: "maxLogicDepth", expected: "a positive integer", valid: positive(true) },
  max_memory_mb: { option: "maxMemoryMb", expected: "a positive number", valid: positive(false) },
  memory_growth: {
    option: "memoryGrowth",
    expected: "a number ≥ 0 (0.15 = 15% more per level)",
    valid: (value) => typeof value === "number" && Number.isFinite(value) && value >= 0,
  },
  allowed_zones: {
    option: "allowedZones",
    expected: "a non-empty list of zone names",
    valid: (value) => Array.isArray(value) && value.length > 0 && value.every((zone) => typeof zone === "string" && zone !== ""),
  },
  max_tokens: { option: "maxTokens", expected: "a positive integer (or .inf for unlimited)", valid: positive(true) },
  max_cost_usd: { option: "maxCostUsd", expected: "a positive number (or .inf for unlimited)", valid: positive(false) },
  timeout_ms: { option: "timeoutMs", expected: "a positive number (or .inf for unlimited)", valid: positive(false) },
};

/** @internal The config file a path (or `REIN_REACH_CONFIG`, or the default) names, absolute. */
export function resolveReachConfigPath(path: string | undefined): string {
  return resolve(process.cwd(), path ?? (process.env.REIN_REACH_CONFIG || DEFAULT_REACH_CONFIG_PATH));
}

/** @internal The file's text, or a {@link ReachConfigError} saying why it cannot be read. */
export function readConfigFile(file: string): string {
  try {
    return readFileSync(file, "utf8");
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    const problem =
      code === "ENOENT"
        ? "file not found (pass a path to loadReachConfig or set REIN_REACH_CONFIG)"
        : `cannot read the file: ${error instanceof Error ? error.message : String(error)}`;
    throw new ReachConfigError(file, problem, { cause: error });
  }
}

/** @internal The policy options `text` gives for `environment`, the whole file validated. */
export function parseReachConfig(file: string, text: string, environment: string | undefined): ReachPolicyOptions {
  const { LineCounter, parseDocument } = yaml();
  const lineCounter = new LineCounter();
  const document = parseDocument(text, { lineCounter, prettyErrors: false });
  const syntaxError = document.errors[0];
  if (syntaxError !== undefined) {
    const { line, col } = lineCounter.linePos(syntaxError.pos[0]);
    throw new ReachConfigError(file, `YAML syntax error: ${syntaxError.message}`, { line, column: col, cause: syntaxError });
  }
  const fail = (path: readonly string[], problem: string, value: unknown, part: "key" | "value" = "value"): never => {
    const offset = locate(document, path, part);
    const position = offset === undefined ? {} : { line: lineCounter.linePos(offset).line, column: lineCounter.linePos(offset).col };
    throw new ReachConfigError(file, problem, { key: path.join("."), value, ...position });
  };
  const root: unknown = document.toJS({ maxAliasCount: 100 });
  if (root === null || root === undefined) {
    throw new ReachConfigError(file, "the file is empty; expected `defaults:` and/or `environments:`");
  }
  if (!isPlainObject(root)) {
    throw new ReachConfigError(file, `the top level must be a mapping with \`defaults:\` and/or \`environments:\`, got ${show(root)}`, { value: root });
  }
  for (const key of Object.keys(root)) {
    if (key !== "defaults" && key !== "environments") fail([key], `unknown key ${key} (known: defaults, environments)`, root[key], "key");
  }
  const section = (path: readonly string[], value: unknown): ReachPolicyOptions => {
    if (value === null || value === undefined) return {};
    if (!isPlainObject(value)) return fail(path, `${path.join(".")} must be a mapping of limits such as max_logic_depth: 5, got ${show(value)}`, value);
    const options: Record<string, unknown> = {};
    for (const [key, item] of Object.entries(value)) {
      const keyPath = [...path, key];
      const field = FIELDS[key];
      if (field === undefined) {
        const snake = key.replace(/[A-Z]/g, (letter) => `_${letter.toLowerCase()}`);
        const hint = FIELDS[snake] === undefined ? `known: ${Object.keys(FIELDS).join(", ")}` : `did you mean ${snake}?`;
        fail(keyPath, `unknown key ${keyPath.join(".")} (${hint})`, item, "key");
      } else if (!field.valid(item)) {
        fail(keyPath, `${keyPath.join(".")} must be ${field.expected}, got ${show(item)}`, item);
      } else {
        options[field.option] = item;
      }
    }
    return options as ReachPolicyOptions;
  };
  const defaults = section(["defaults"], root.defaults);
  const environments = root.environments ?? {};
  if (!isPlainObject(environments)) {
    return fail(["environments"], `environments must be a mapping of environment names to limits, got ${show(environments)}`, environments);
  }
  const sections = new Map(Object.entries(environments).map(([name, value]) => [name, section(["environments", name], value)]));
  if (environment === undefined) return defaults;
  const chosen = sections.get(environment);
  if (chosen === undefined) {
    const names = sections.size === 0 ? "the file has no environments" : `the file has: ${[...sections.keys()].join(", ")}`;
    throw new ReachConfigError(file, `REIN_ENV=${JSON.stringify(environment)} names no environment (${names})`, { key: "REIN_ENV", value: environment });
  }
  return { ...defaults, ...chosen };
}

/** The offset of a key (or of its value) in the document, for the error's line and column. */
function locate(document: Document, path: readonly string[], part: "key" | "value"): number | undefined {
  const { isMap, isScalar } = yaml();
  let node: unknown = document.contents;
  let offset: number | undefined;
  for (const [index, segment] of path.entries()) {
    if (!isMap(node)) return offset;
    const pair = node.items.find((item) => isScalar(item.key) && String(item.key.value) === segment);
    if (pair === undefined) return offset;
    offset = (pair.key as { range?: readonly number[] }).range?.[0] ?? offset;
    node = pair.value;
    if (index === path.length - 1 && part === "value") offset = (node as { range?: readonly number[] } | null)?.range?.[0] ?? offset;
  }
  return offset;
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

function show(value: unknown): string {
  if (typeof value === "number") return String(value);
  if (value === undefined) return "nothing";
  return JSON.stringify(value) ?? String(value);
}
