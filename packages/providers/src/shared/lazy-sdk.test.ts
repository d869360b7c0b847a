import { execFileSync } from "node:child_process";
import { join } from "node:path";

const ROOT = join(__dirname, "..", "..", "..", "..");

/** Runs `code` in a fresh Node process with the workspace's TypeScript loaded through tsx; returns its stdout. */
function inFreshProcess(code: string): string {
  return execFileSync(process.execPath, ["--require", require.resolve("tsx/cjs"), "-e", code], {
    cwd: ROOT,
    env: { ...process.env, TSX_TSCONFIG_PATH: join(ROOT, "tsconfig.test.json"), ANTHROPIC_API_KEY: "", OPENAI_API_KEY: "" },
    encoding: "utf8",
  });
}

describe("provider SDKs load lazily", () => {
  it("importing rein loads neither SDK; creating a provider loads only its own", () => {
    const output = inFreshProcess(`
      const loaded = (name) => Object.keys(require.cache).some((path) => path.includes("/node_modules/" + name + "/"));
      const rein = require("./packages/rein/src/index.ts");
      const after = [loaded("@anthropic-ai/sdk"), loaded("openai")];
      new rein.AnthropicProvider("claude-test", { apiKey: "k" }).client;
      const anthropic = [loaded("@anthropic-ai/sdk"), loaded("openai")];
      new rein.OpenAIProvider("gpt-test", { apiKey: "k" }).client;
      // The client comes from the SDK's client entry: its index (with helpers the adapter never uses) stays unloaded.
      const index = Object.keys(require.cache).some((path) => path.endsWith("/@anthropic-ai/sdk/index.js"));
      console.log(JSON.stringify({ after, anthropic, index, both: [loaded("@anthropic-ai/sdk"), loaded("openai")] }));
    `);
    expect(JSON.parse(output.trim().split("\n").at(-1)!)).toEqual({ after: [false, false], anthropic: [true, false], index: false, both: [true, true] });
  }, 60_000); // sized for a loaded 2-core machine
});
