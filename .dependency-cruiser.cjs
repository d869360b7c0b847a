/**
 * The import rules of the Rein workspace (docs/structure.md), checked by
 * `pnpm test` (packages/rein/src/import-structure.test.ts runs dependency-cruiser
 * with this file):
 *
 * - no import cycle anywhere, type-only imports included;
 * - arrows between packages point down the package order;
 * - another package is reached through its name (its `src/index.ts`), never
 *   by a path into its files;
 * - every folder under packages/ has a place in the order;
 * - @rein/store-postgres's session store imports @rein/session, not @rein/core.
 */

/**
 * The package order, bottom first. A package may import only packages of a
 * lower rank; packages of one rank never import each other.
 */
const packageRanks = {
  guard: 0,
  session: 1,
  core: 2,
  providers: 3,
  "store-postgres": 3,
  rein: 4,
  server: 5,
  cli: 6,
};

const packageNames = Object.keys(packageRanks);
const escape = (name) => name.replace(/[-]/g, "\\-");

const packageOrderRules = packageNames.map((name) => {
  const notBelow = packageNames.filter(
    (other) => other !== name && packageRanks[other] >= packageRanks[name],
  );
  return {
    name: `package-order-${name}`,
    comment:
      `@rein/${name} may import only packages below it in the order ` +
      "guard <- session <- core <- providers | store-postgres <- rein <- server <- cli",
    severity: "error",
    from: { path: `^packages/${escape(name)}/` },
    to: { path: `^packages/(${notBelow.map(escape).join("|")})/` },
  };
});

/** @type {import('dependency-cruiser').IConfiguration} */
module.exports = {
  forbidden: [
    {
      name: "no-circular",
      comment: "No import cycle inside a package, type-only imports included: the options type and its schema live in one file the module imports, never the reverse.",
      severity: "error",
      // One allowed pair (docs/structure.md): Context and CallScope name each other's types; call-scope.ts imports Context as a type only.
      from: { pathNot: "^packages/core/src/(context/context|scope/call-scope)\\.ts$" },
      to: { circular: true },
    },
    {
      name: "call-scope-knows-context-as-a-type-only",
      comment: "The allowed pair stays type-only: call-scope.ts may name Context's type, never load context.ts.",
      severity: "error",
      from: { path: "^packages/core/src/scope/call-scope\\.ts$" },
      to: { path: "^packages/core/src/context/context\\.ts$", dependencyTypesNot: ["type-only"] },
    },
    ...packageOrderRules.filter((rule) => rule.to.path !== "^packages/()/"),
    {
      name: "store-postgres-uses-session-only",
      comment:
        "@rein/store-postgres's session store imports @rein/session (the store implementer API), never @rein/core; its API key store builds on the spend-cap arithmetic of @rein/guard. Its tests may import core, to run agents on it.",
      severity: "error",
      from: { path: "^packages/store-postgres/", pathNot: "(\\.test\\.ts$|/__fixtures__/)" },
      to: { path: "^packages/(core|providers)/" },
    },
    {
      name: "no-reach-into-another-package",
      comment: "Import another package by its name (@rein/<name>), never a path into its files.",
      severity: "error",
      // Tests and their fixtures may share another package's fixtures (store-postgres runs core's agent fixtures on its store).
      from: { path: "^packages/([^/]+)/", pathNot: "(\\.test\\.ts$|/__fixtures__/)" },
      to: {
        path: "^packages/[^/]+/",
        pathNot: ["^packages/$1/", "^packages/[^/]+/src/index\\.ts$"],
      },
    },
    {
      name: "package-has-a-place-in-the-order",
      comment: `Every package has a rank in .dependency-cruiser.cjs (packageRanks): ${packageNames.join(", ")}.`,
      severity: "error",
      from: { path: `^packages/(?!(${packageNames.map(escape).join("|")})/)[^/]+/` },
      to: {},
    },
  ],
  options: {
    doNotFollow: { path: "node_modules" },
    exclude: { path: "(^|/)(dist|node_modules)/" },
    tsPreCompilationDeps: true,
    tsConfig: { fileName: "tsconfig.test.json" },
    enhancedResolveOptions: { extensions: [".ts", ".js", ".json"] },
  },
};
