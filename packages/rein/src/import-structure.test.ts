import { execFile } from "node:child_process";
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";

/**
 * The import rules of docs/structure.md, checked with dependency-cruiser and
 * the workspace's .dependency-cruiser.cjs: no cycle inside a package, arrows
 * only down the package order, other packages only through their names.
 */
const root = join(__dirname, "..", "..", "..");
const config = join(root, ".dependency-cruiser.cjs");
const cruiseScript = join(__dirname, "__fixtures__", "cruise-workspaces.mjs");

interface Violation {
  readonly rule: { readonly name: string };
  readonly from: string;
  readonly to: string;
  readonly cycle?: readonly ({ readonly name: string } | string)[];
}

/**
 * Node's arguments for the cruise. dependency-cruiser (ES modules) imports TypeScript (CommonJS, a 9 MB file whose
 * package.json names no module type); Node 20.19+ then parses that whole file once more only to look for ES module
 * syntax, about 0.5 s of CPU. Without the detection a file of such a package is CommonJS, as it is for TypeScript,
 * and the cruise reports the same modules, dependencies and violations.
 */
const NODE_ARGS = process.allowedNodeEnvironmentFlags.has("--experimental-detect-module") ? ["--no-experimental-detect-module"] : [];

/** Runs dependency-cruiser over `packages/` of each workspace, in one process; returns each one's violations. */
function cruise(workspaces: readonly string[]): Promise<Violation[][]> {
  return new Promise((resolve, reject) => {
    execFile(process.execPath, [...NODE_ARGS, cruiseScript, config, ...workspaces], { maxBuffer: 256 * 1024 * 1024 }, (error, stdout, stderr) => {
      try {
        resolve(JSON.parse(stdout) as Violation[][]);
      } catch {
        reject(new Error(`dependency-cruiser gave no report (${error?.message ?? "no error"}): ${stderr}`));
      }
    });
  });
}

/** The cruise of the workspace and of the fixture, in one process: about 6.5 s of CPU, over 60 s of waiting at a load of 20 on two cores. */
const CRUISE_TIMEOUT_MS = 300_000;

const describeViolation = (violation: Violation): string => `${violation.rule.name}: ${violation.from} → ${violation.to}`;

/** A workspace under `directory` that breaks every rule once. */
function writeRuleBreakingWorkspace(directory: string): void {
  const write = (path: string, text: string): void => {
    mkdirSync(dirname(join(directory, path)), { recursive: true });
    writeFileSync(join(directory, path), text);
  };
  write(
    "tsconfig.test.json",
    JSON.stringify({
      compilerOptions: { module: "NodeNext", moduleResolution: "NodeNext", baseUrl: ".", paths: { "@rein/*": ["packages/*/src/index.ts"] } },
    }),
  );
  // A schema that imports the module it validates, which imports it back (the cycle this rule removed from core).
  write("packages/guard/src/index.ts", 'export { run } from "./runner";\n');
  write("packages/guard/src/runner.ts", 'import { checkOptions } from "./runner-schema";\nexport function run(options: unknown) { checkOptions(options); }\n');
  write(
    "packages/guard/src/runner-schema.ts",
    'import type { run } from "./runner";\nexport type RunnerOptions = Parameters<typeof run>[0];\nexport function checkOptions(_options: unknown) {}\n',
  );
  // guard is the bottom of the order: importing core points up.
  write("packages/guard/src/up.ts", 'import { core } from "@rein/core";\nexport const up = core;\n');
  write("packages/core/src/index.ts", 'export const core = 1;\nexport { deep } from "./deep";\n');
  // core reaching into guard's files instead of importing @rein/guard.
  write("packages/core/src/deep.ts", 'import { run } from "../../guard/src/runner";\nexport const deep = run;\n');
  // The Postgres session store importing core from its shipped source (its test may), instead of @rein/session's implementer API.
  write("packages/store-postgres/src/index.ts", 'export { PgStore } from "./pg-store";\n');
  write("packages/store-postgres/src/pg-store.ts", 'import { core } from "@rein/core";\nexport const PgStore = core;\n');
  write("packages/store-postgres/src/pg-store.test.ts", 'import { core } from "@rein/core";\nexport const used = core;\n');
  // A package with no place in the order.
  write("packages/plugins/src/index.ts", 'export { plugin } from "./plugin";\n');
  write("packages/plugins/src/plugin.ts", "export const plugin = 1;\n");
}

let fixture: string;
let workspaceViolations: Violation[];
let fixtureViolations: Violation[];

beforeAll(async () => {
  fixture = mkdtempSync(join(tmpdir(), "rein-structure-"));
  writeRuleBreakingWorkspace(fixture);
  [workspaceViolations, fixtureViolations] = (await cruise([root, fixture])) as [Violation[], Violation[]];
}, CRUISE_TIMEOUT_MS);

afterAll(() => rmSync(fixture, { recursive: true, force: true }));

describe("import structure (docs/structure.md)", () => {
  it("the workspace has no import cycle, no import up the package order and no path into another package", () => {
    expect(workspaceViolations.map(describeViolation)).toEqual([]);
  });

  describe("on a fixture workspace that breaks every rule", () => {
    it("fails on an import cycle inside a package, type-only imports included", () => {
      const cycles = fixtureViolations.filter((violation) => violation.rule.name === "no-circular");
      expect(cycles).toHaveLength(1);
      const files = new Set([cycles[0].from, ...(cycles[0].cycle ?? []).map((step) => (typeof step === "string" ? step : step.name))]);
      expect([...files].sort()).toEqual(["packages/guard/src/runner-schema.ts", "packages/guard/src/runner.ts"]);
    });

    it("fails on an import that points up the package order", () => {
      expect(fixtureViolations.filter((violation) => violation.rule.name === "package-order-guard").map(describeViolation)).toEqual([
        "package-order-guard: packages/guard/src/up.ts → packages/core/src/index.ts",
      ]);
    });

    it("fails on a path into another package's files", () => {
      expect(fixtureViolations.filter((violation) => violation.rule.name === "no-reach-into-another-package").map(describeViolation)).toEqual([
        "no-reach-into-another-package: packages/core/src/deep.ts → packages/guard/src/runner.ts",
      ]);
    });

    it("fails when @rein/store-postgres's session store imports @rein/core (its tests may)", () => {
      expect(fixtureViolations.filter((violation) => violation.rule.name === "store-postgres-uses-session-only").map(describeViolation)).toEqual([
        "store-postgres-uses-session-only: packages/store-postgres/src/pg-store.ts → packages/core/src/index.ts",
      ]);
    });

    it("fails on a package that has no place in the order", () => {
      expect(fixtureViolations.some((violation) => violation.rule.name === "package-has-a-place-in-the-order" && violation.from === "packages/plugins/src/index.ts")).toBe(
        true,
      );
    });
  });
});
