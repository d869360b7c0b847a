import { createHash } from "node:crypto";
import { mkdtempSync, rmSync } from "node:fs";
import { connect } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { SqliteApiKeyStore } from "@rein/server";
import { ExitCode } from "./exit-codes";
import type { ServeCommandOptions } from "./serve-command";
import { runMain } from "./__fixtures__/run-main";
import { serving as servingIn } from "./__fixtures__/serving";

const ROOT = join(__dirname, "..", "..", "..");
const EXAMPLE = join(ROOT, "examples", "cli-chain.ts");

let dir: string;
beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), "rein-cli-keys-"));
  process.env["CLI_CHAIN_PAUSE_MS"] = "0";
});
afterAll(() => {
  delete process.env["CLI_CHAIN_PAUSE_MS"];
  rmSync(dir, { recursive: true, force: true });
});

/** Runs `rein serve` in-process (cwd: this file's temporary directory) until `stop` is called. */
function serving(options: ServeCommandOptions): ReturnType<typeof servingIn> {
  return servingIn(dir, options);
}

function run(url: string, key?: string): Promise<Response> {
  return fetch(`${url}/v1/agent/run`, {
    method: "POST",
    headers: { "content-type": "application/json", ...(key === undefined ? {} : { authorization: `Bearer ${key}` }) },
    body: JSON.stringify({ entry: "plan", task: "recursion" }),
  });
}

describe("rein keys", () => {
  it("create prints the key alone on stdout (notes on stderr); only its SHA-256 is stored; ls lists it; revoke removes it", async () => {
    const store = join(dir, "keys.db");
    const created = await runMain(["keys", "create", "--name", "ci", "--scopes", "run,read", "--store", store], dir);
    expect(created.code).toBe(ExitCode.Ok);
    expect(created.stdout).toMatch(/^rein_[0-9a-f]{16}_[A-Za-z0-9_-]{43}\n$/);
    const key = created.stdout.trim();
    expect(created.stderr).toMatch(/^rein keys: created 'ci' \(id [0-9a-f]{16}, scopes run,read\) in .*keys\.db; the key above is shown once/);
    expect(created.stderr).not.toContain(key);
    const keys = new SqliteApiKeyStore({ path: store });
    const stored = await keys.find(key.slice(5, 21));
    await keys.close();
    expect(stored).toMatchObject({ name: "ci", sha256: createHash("sha256").update(key).digest("hex") });

    const listed = await runMain(["keys", "ls", "--store", store], dir);
    expect(listed.stdout).toMatch(/^NAME\s+ID\s+SCOPES\s+CREATED\s+CAPS\nci\s+[0-9a-f]{16}\s+run,read\s+\d{4}-\d\d-\d\d \d\d:\d\d:\d\d -\n$/);
    expect(listed.stdout).not.toContain(key.slice(22));

    const again = await runMain(["keys", "create", "--name", "ci", "--scopes", "run", "--store", store], dir);
    expect(again).toMatchObject({ code: ExitCode.UsageError, stdout: "" });
    expect(again.stderr).toContain("a key named 'ci' exists");

    expect(await runMain(["keys", "revoke", "ci", "--store", store], dir)).toMatchObject({ code: ExitCode.Ok, stdout: "rein keys: revoked 'ci'\n" });
    expect(await runMain(["keys", "ls", "--store", store], dir)).toMatchObject({ stdout: "No keys.\n" });
    const unknown = await runMain(["keys", "revoke", "ci", "--store", store], dir);
    expect(unknown.code).toBe(ExitCode.Failed);
    expect(unknown.stderr).toMatch(/no key named 'ci'/);
  });

  it("bad scopes, a missing --name, or ls on a missing store are one-line errors", async () => {
    const bad = await runMain(["keys", "create", "--name", "x", "--scopes", "run,root", "--store", join(dir, "k2.db")], dir);
    expect(bad.code).toBe(ExitCode.UsageError);
    expect(bad.stderr).toBe("rein: --scopes must be a comma-separated list of run, read, mint, admin; 'root' is not one\n");
    expect((await runMain(["keys", "create", "--scopes", "run"], dir)).code).toBe(ExitCode.UsageError);
    const missing = await runMain(["keys", "ls", "--store", join(dir, "none.db")], dir);
    expect(missing.code).toBe(ExitCode.Failed);
    expect(missing.stderr).toMatch(/no session store at .*none\.db/);
  });
});

describe("rein serve and authentication", () => {
  it("--auth: runs need a key of the store (401 without, 403 without the scope); /healthz stays open; keys revoked meanwhile stop working", async () => {
    const store = join(dir, "auth.db");
    const runner = (await runMain(["keys", "create", "--name", "runner", "--scopes", "run", "--store", store], dir)).stdout.trim();
    const reader = (await runMain(["keys", "create", "--name", "reader", "--scopes", "read", "--store", store], dir)).stdout.trim();
    const server = serving({ store, auth: true });
    const url = await server.url;
    try {
      while (!server.out().includes("API keys required")) await new Promise((r) => setTimeout(r, 10));
      expect(server.out()).toContain("rein serve: API keys required (2 in ");
      expect((await run(url)).status).toBe(401);
      expect((await run(url, reader)).status).toBe(403);
      const ran = await run(url, runner);
      expect(ran.status).toBe(200);
      expect(await ran.json()).toMatchObject({ status: "completed" });
      expect((await fetch(`${url}/healthz`)).status).toBe(200);
      await runMain(["keys", "revoke", "runner", "--store", store], dir);
      expect((await run(url, runner)).status).toBe(401);
    } finally {
      expect(await server.stop()).toBe(ExitCode.Ok);
    }
  });

  it("on loopback without --auth it serves open and says so", async () => {
    const server = serving({ store: join(dir, "open.db") });
    const url = await server.url;
    try {
      expect(server.out()).toContain("rein serve: open: no authentication (loopback only; --auth requires API keys)");
      expect((await run(url)).status).toBe(200);
    } finally {
      await server.stop();
    }
  });

  it("on a non-loopback host it refuses to start without --auth or --no-auth (exit 2); --no-auth serves open and says so", async () => {
    const refused = await runMain(["serve", EXAMPLE, "--host", "0.0.0.0", "--port", "0", "--store", join(dir, "x.db")], dir);
    expect(refused.code).toBe(ExitCode.UsageError);
    expect(refused.stderr).toBe("rein: refusing to serve on 0.0.0.0 without authentication: pass --auth (API keys from `rein keys create`), or --no-auth to serve it open to anyone who can reach it\n");
    const server = serving({ store: join(dir, "noauth.db"), host: "0.0.0.0", auth: false });
    await server.url;
    try {
      expect(server.out()).toContain("rein serve: open to anyone who can reach 0.0.0.0: no authentication (--no-auth)");
    } finally {
      await server.stop();
    }
  });

  it("the connection limits are flags: --headers-timeout-ms closes a client that never finishes its headers; a bad value is a usage error", async () => {
    const server = serving({ store: join(dir, "limits.db"), headersTimeoutMs: 100 });
    const { hostname, port } = new URL(await server.url);
    try {
      const socket = connect(Number(port), hostname);
      let received = "";
      socket.on("data", (chunk: Buffer) => (received += chunk.toString()));
      socket.write("GET /healthz HTTP/1.1\r\n");
      await new Promise<void>((resolve) => socket.once("close", () => resolve()));
      expect(received).toMatch(/^HTTP\/1\.1 408 /);
    } finally {
      await server.stop();
    }
    for (const flag of ["--headers-timeout-ms", "--body-timeout-ms", "--idle-timeout-ms", "--max-connections"]) {
      const bad = await runMain(["serve", EXAMPLE, flag, "0"], dir);
      expect(bad.code).toBe(ExitCode.UsageError);
      expect(bad.stderr).toContain(`${flag} must be`);
    }
  });
});
