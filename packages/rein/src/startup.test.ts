import { execFileSync } from "node:child_process";
import { join } from "node:path";

const ROOT = join(__dirname, "..", "..", "..");

/** Runs `code` in a fresh Node process with the workspace's TypeScript loaded through tsx; returns its last stdout line. */
function inFreshProcess(code: string, env: NodeJS.ProcessEnv = {}): string {
  const output = execFileSync(process.execPath, ["--require", require.resolve("tsx/cjs"), "-e", code], {
    cwd: ROOT,
    env: { ...process.env, TSX_TSCONFIG_PATH: join(ROOT, "tsconfig.test.json"), REIN_LOG_LEVEL: "", ...env },
    encoding: "utf8",
  });
  return output.trim().split("\n").at(-1)!;
}

const LOADED = `const loaded = (name) => Object.keys(require.cache).some((path) => path.includes("/node_modules/" + name + "/"));`;

describe("start-up: importing rein loads only what every program needs", () => {
  it("no YAML parser and no pino until used: a reach config read loads yaml; a Runtime without REIN_LOG_LEVEL needs no pino", () => {
    const output = inFreshProcess(`
      ${LOADED}
      const rein = require("./packages/rein/src/index.ts");
      const afterImport = { yaml: loaded("yaml"), pino: loaded("pino") };
      new rein.Runtime({ provider: new rein.ScriptedProvider(["ok"]) });
      const afterRuntime = { pino: loaded("pino") };
      try { rein.loadReachConfig("/nonexistent/reach.yaml", { watch: false, reloadSignal: false }); } catch {}
      const fs = require("node:fs"), os = require("node:os"), path = require("node:path");
      const file = path.join(fs.mkdtempSync(path.join(os.tmpdir(), "rein-startup-")), "reach.yaml");
      fs.writeFileSync(file, "defaults:\\n  max_logic_depth: 3\\n");
      const config = rein.loadReachConfig(file, { watch: false, reloadSignal: false });
      console.log(JSON.stringify({ afterImport, afterRuntime, depth: config.limits.maxLogicDepth, yaml: loaded("yaml") }));
    `);
    expect(JSON.parse(output)).toEqual({ afterImport: { yaml: false, pino: false }, afterRuntime: { pino: false }, depth: 3, yaml: true });
  }, 60_000); // sized for a loaded 2-core machine

  it("REIN_LOG_LEVEL set: the Runtime's default logger is pino at that level", () => {
    const output = inFreshProcess(
      `
      ${LOADED}
      const rein = require("./packages/rein/src/index.ts");
      const runtime = new rein.Runtime({ provider: new rein.ScriptedProvider(["ok"]) });
      console.log(JSON.stringify({ pino: loaded("pino"), level: runtime.logger.level }));
    `,
      { REIN_LOG_LEVEL: "warn" },
    );
    expect(JSON.parse(output)).toEqual({ pino: true, level: "warn" });
  }, 60_000); // sized for a loaded 2-core machine
});
