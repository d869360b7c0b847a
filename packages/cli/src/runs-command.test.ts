import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Context, SessionStore } from "rein";
import { ExitCode } from "./exit-codes";
import { calls, faults, Pipeline } from "./__fixtures__/jobs";
import { runMain } from "./__fixtures__/run-main";

const MODULE = join(__dirname, "__fixtures__", "jobs.ts");
let dir: string;
let storePath: string;
let runId: string;

beforeEach(async () => {
  dir = mkdtempSync(join(tmpdir(), "rein-cli-runs-"));
  storePath = join(dir, "runs.db");
  calls.length = 0;
  faults.failSecondOnce = true;
  const store = new SessionStore({ path: storePath, shutdownFlush: false });
  try {
    await expect(new Pipeline({ context: Context.forSession(store, "jobs") }).process("hi")).rejects.toThrow("the second step failed once");
    runId = store.listRuns()[0]!.runId;
  } finally {
    store.close();
  }
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

describe("rein runs", () => {
  it("ls lists the store's runs with state and why they stopped; --state narrows them", async () => {
    const listed = await runMain(["runs", "ls", "--store", storePath], dir);
    expect(listed.code).toBe(ExitCode.Ok);
    const [header, line] = listed.stdout.trimEnd().split("\n");
    expect(header).toMatch(/^RUN\s+METHOD\s+STATE\s+SESSION\s+UPDATED\s+WHY$/);
    expect(line).toMatch(new RegExp(`^${runId}\\s+Pipeline\\.process\\s+error\\s+jobs\\s+\\d{4}-\\d\\d-\\d\\d \\d\\d:\\d\\d:\\d\\d\\s+.*the second step failed once$`));
    expect((await runMain(["runs", "ls", "--store", storePath, "--state", "paused,interrupted"], dir)).stdout).toBe("No runs.\n");
    const bad = await runMain(["runs", "ls", "--store", storePath, "--state", "stuck"], dir);
    expect(bad.code).toBe(ExitCode.UsageError);
    expect(bad.stderr).toMatch(/^rein: --state takes running, interrupted, paused, cancelled, error, completed \(comma-separated\), got 'stuck'\n$/);
  });

  it("resume finishes the run on its node with the module's agent class: the finished step is not run again", async () => {
    const resumed = await runMain(["runs", "resume", MODULE, runId, "--store", storePath, "--code-change-policy", "use_latest"], dir);
    expect({ code: resumed.code, stdout: resumed.stdout, stderr: resumed.stderr }).toEqual({ code: ExitCode.Ok, stdout: "HI!\n", stderr: "" });
    expect(calls).toEqual(["upper", "exclaim", "exclaim"]);
    const store = new SessionStore({ path: storePath, shutdownFlush: false });
    try {
      expect(store.getRun(runId)).toMatchObject({ state: "completed" });
      expect(store.readNodes("jobs").filter((node) => node.name === "Pipeline.process")).toHaveLength(1);
    } finally {
      store.close();
    }
    // Completed: it cannot be resumed again — one line, exit 1.
    const again = await runMain(["runs", "resume", MODULE, runId, "--store", storePath], dir);
    expect(again.code).toBe(ExitCode.Failed);
    expect(again.stderr.split("\n")).toHaveLength(2);
    expect(again.stderr).toContain(runId);
  });

  it("an unknown run, a module without the run's class, or a bad policy name is a one-line usage error", async () => {
    const unknown = await runMain(["runs", "resume", MODULE, "no-such-run", "--store", storePath], dir);
    expect(unknown).toMatchObject({ code: ExitCode.UsageError, stderr: expect.stringMatching(/^rein: no run 'no-such-run' in .*runs\.db \(rein runs ls lists them\)\n$/) });
    const otherModule = join(__dirname, "..", "..", "..", "examples", "cli-chain.ts");
    const wrongClass = await runMain(["runs", "resume", otherModule, runId, "--store", storePath], dir);
    expect(wrongClass).toMatchObject({ code: ExitCode.UsageError, stderr: expect.stringContaining("lists no entry of the class of Pipeline.process") });
    const badPolicy = await runMain(["runs", "resume", MODULE, runId, "--store", storePath, "--code-change-policy", "newest"], dir);
    expect(badPolicy).toMatchObject({ code: ExitCode.UsageError, stderr: "rein: --code-change-policy takes keep_original or use_latest, got 'newest'\n" });
    expect(calls).toEqual(["upper", "exclaim"]);
  });
});
