// Runs dependency-cruiser over `packages/` of each workspace named, with one
// configuration, in this one process (dependency-cruiser is ESM-only, so it
// runs here, outside jest's CommonJS transform), and prints one JSON line:
// the violations of each workspace, in the order given.
//
// Usage: node cruise-workspaces.mjs <config file> <workspace>...
//
// What `depcruise --config <config file> --output-type json packages`
// finds, run in each workspace: through dependency-cruiser's API, given what
// its CLI gives it (the rule set with its options, validation on, the
// tsconfig those options name); on this repository the two report the same
// modules, dependencies and violations. One process instead of one per
// workspace: dependency-cruiser and TypeScript load once (about 1.5 s of CPU
// each time). dependency-cruiser reads every path relative to the working
// directory, so the process moves into each workspace before cruising it;
// a cruise clears its caches at its start and end.
import extractDepcruiseConfig from "dependency-cruiser/config-utl/extract-depcruise-config";
import extractTSConfig from "dependency-cruiser/config-utl/extract-ts-config";
import { cruise } from "dependency-cruiser";
import { resolve } from "node:path";

const [configFile, ...workspaces] = process.argv.slice(2);
const config = resolve(configFile);
const violations = [];
for (const workspace of workspaces) {
  process.chdir(workspace);
  const ruleSet = await extractDepcruiseConfig(config);
  const tsConfigFile = ruleSet.options?.tsConfig?.fileName;
  const tsConfig = tsConfigFile === undefined ? undefined : extractTSConfig(tsConfigFile);
  const result = await cruise(["packages"], { ruleSet, validate: true, outputType: "json" }, {}, { tsConfig });
  violations.push(JSON.parse(result.output).summary.violations);
}
process.stdout.write(`${JSON.stringify(violations)}\n`);
