import { runMain } from "./__fixtures__/run-main";
import { ExitCode } from "./exit-codes";

describe("rein --help and usage errors", () => {
  test("--help lists the commands, the options and the exit codes, and exits 0", async () => {
    const { code, stdout, stderr } = await runMain(["--help"]);
    expect(code).toBe(ExitCode.Ok);
    expect(stderr).toBe("");
    expect(stdout).toContain("Usage: rein [options] [command]");
    expect(stdout).toMatch(/run \[options\] <target>/);
    expect(stdout).toMatch(/sessions\s+Inspect and export recorded sessions/);
    expect(stdout).toContain("Exit codes:");
    for (const line of ["0    ok", "1    the run", "2    usage error", "130  interrupted"]) expect(stdout).toContain(line);
  });

  test("run --help documents --task, --max-reach, --env, --store and --verbose", async () => {
    const { code, stdout } = await runMain(["run", "--help"]);
    expect(code).toBe(ExitCode.Ok);
    for (const option of ["--task <text>", "--max-reach <n>", "--env <name>", "--store <path|url>", "--verbose"]) expect(stdout).toContain(option);
    expect(stdout).not.toContain("--stall-ms");
  });

  test("sessions export --help names the formats", async () => {
    const { code, stdout } = await runMain(["sessions", "export", "--help"]);
    expect(code).toBe(ExitCode.Ok);
    expect(stdout).toContain('choices: "mermaid", "dot", "json"');
  });

  test.each([
    [["frobnicate"], /unknown command 'frobnicate'/],
    [["run", "examples/cli-chain.ts#plan"], /required option '--task <text>' not specified/],
    // A misspelt option is named as unknown, with the suggestion (it was reported as a missing --task).
    [["run", "examples/cli-chain.ts#plan", "--taks", "x"], /^error: unknown option '--taks'\n\(Did you mean --task\?\)/],
    [["run", "examples/cli-chain.ts", "--task", "x"], /expected <module>#<entry>/],
    [["run", "examples/cli-chain.ts#plan", "--task", "x", "--max-reach", "zero"], /--max-reach must be a positive integer, got 'zero'/],
    // Decimal digits only, as the spend-cap flags take them (hex and exponent forms were accepted).
    [["run", "examples/cli-chain.ts#plan", "--task", "x", "--max-reach", "1e3"], /--max-reach must be a positive integer, got '1e3'/],
    [["serve", "examples/cli-chain.ts", "--port", "0x50"], /--port must be an integer from 0 to 65535, got '0x50'/],
    [["run", "examples/no-such-module.ts#plan", "--task", "x"], /module not found: .*no-such-module\.ts/],
    [["sessions", "export", "s1", "--format", "xml"], /Allowed choices are mermaid, dot, json/],
    // An empty id names what to pass (it reached the store, which failed with its own API's message, exit 1).
    [["sessions", "show", ""], /^rein: <id> must be a session id, got '' \(rein sessions ls lists them\)\n$/],
    [["runs", "resume", "examples/cli-chain.ts", ""], /^rein: <runId> must be a run id, got '' \(rein runs ls lists them\)\n$/],
    [["keys", "revoke", ""], /^rein: <name> must be a key name, got '' \(rein keys ls lists them\)\n$/],
    // An empty --session reached the run's child process and its store ("Invalid SessionStore.createSession argument id"), exit 1;
    // an empty --store opened the working directory as a database, exit 1.
    [["run", "examples/cli-chain.ts#plan", "--task", "x", "--session", ""], /^rein: --session must be a session id, got '' \(leave it out to record into a new session\)\n$/],
    [["sessions", "ls", "--store", ""], /^rein: --store must be a SQLite file or a postgres:\/\/ URL, got '' \(leave it out for \.rein\/sessions\.db\)\n$/],
    [["keys", "ls", "--store", ""], /^rein: --store must be a SQLite file or a postgres:\/\/ URL, got '' \(leave it out for \.rein\/sessions\.db\)\n$/],
    [["inspect", ""], /^rein: \[store\] must be a SQLite file or a postgres:\/\/ URL, got '' \(leave it out for \.rein\/sessions\.db\)\n$/],
    // A run id recorded when ids could begin with '-': commander takes it for an option; rein says what to type.
    [["runs", "resume", "examples/cli-chain.ts", "-FsDZM1XQLtpWW4BReRbmA-4"], /^error: unknown option '-FsDZM1XQLtpWW4BReRbmA-4'\n[\s\S]*rein: '-FsDZM1XQLtpWW4BReRbmA-4' looks like an id: an argument that begins with '-' goes after --, options first \(rein runs resume --store <path> <module> -- -FsDZM1XQLtpWW4BReRbmA-4\)\n$/],
  ])("usage error %j exits 2 with a one-line message", async (argv, message) => {
    const { code, stdout, stderr } = await runMain(argv);
    expect(code).toBe(ExitCode.UsageError);
    expect(stdout).toBe("");
    expect(stderr).toMatch(message);
    expect(stderr).not.toMatch(/\n\s+at /);
  });
});
