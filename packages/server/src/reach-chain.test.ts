import { spawn, type ChildProcess } from "node:child_process";
import { createServer as createNetServer } from "node:net";
import { resolve } from "node:path";
import { encodePolicyHeader } from "rein";

const ROOT = resolve(__dirname, "../../..");

function freePort(): Promise<number> {
  return new Promise((done, fail) => {
    const probe = createNetServer();
    probe.once("error", fail);
    probe.listen(0, "127.0.0.1", () => {
      const { port } = probe.address() as { port: number };
      probe.close(() => done(port));
    });
  });
}

function start(name: string, port: number, peerPort: number): Promise<ChildProcess> {
  const child = spawn(resolve(ROOT, "node_modules/.bin/tsx"), ["--tsconfig", "tsconfig.test.json", "packages/server/src/__fixtures__/hop-server.ts"], {
    cwd: ROOT,
    env: { ...process.env, NAME: name, PORT: String(port), PEER_URL: `http://127.0.0.1:${peerPort}`, REIN_POLICY_SECRET: "chain-secret" },
    stdio: ["ignore", "pipe", "pipe"],
  });
  return new Promise((done, fail) => {
    let output = "";
    child.stdout!.on("data", (chunk: Buffer) => {
      output += chunk.toString();
      if (output.includes("listening")) done(child);
    });
    child.stderr!.on("data", (chunk: Buffer) => (output += chunk.toString()));
    child.once("exit", (code) => fail(new Error(`server ${name} exited ${code}: ${output}`)));
  });
}

interface Hop {
  server: string;
  depth: { used: number; limit: number };
  modelSaid: string;
  toolSaw: string;
  peer: { result?: Hop; budget?: { depth: number }; refused?: number; error?: { type: string } };
}

describe("two real processes calling each other through reachFetch", () => {
  const children: ChildProcess[] = [];
  afterAll(() => {
    for (const child of children) child.kill("SIGTERM");
  });

  it("A → B → A → B: each hop has one level less; at depth 0 the callee answers 403 and the caller's tool and model see the refusal", async () => {
    const [portA, portB] = [await freePort(), await freePort()];
    children.push(await start("A", portA, portB), await start("B", portB, portA));
    const response = await fetch(`http://127.0.0.1:${portA}/v1/agent/run`, {
      method: "POST",
      headers: { "content-type": "application/json", "X-Agent-Policy": encodePolicyHeader({ depth: 3 }, { secret: "chain-secret" }) },
      body: JSON.stringify({ entry: "hop" }),
    });
    expect(response.status).toBe(200);
    const first = (await response.json()) as { result: Hop; budget: { depth: number } };
    // Hop 1: A received depth 3.
    expect(first.budget.depth).toBe(3);
    expect(first.result).toMatchObject({ server: "A", depth: { used: 1, limit: 3 }, modelSaid: "the peer answered" });
    // Hop 2: B received what A had left.
    const second = first.result.peer;
    expect(second.budget?.depth).toBe(2);
    expect(second.result).toMatchObject({ server: "B", depth: { used: 1, limit: 2 } });
    // Hop 3: A again, one level left.
    const third = second.result!.peer;
    expect(third.budget?.depth).toBe(1);
    expect(third.result).toMatchObject({ server: "A", depth: { used: 1, limit: 1 }, modelSaid: "the peer refused: reach exhausted" });
    // Hop 4: B would get depth 0: refused with 403 before running; A's tool saw it, and so did its model.
    const fourth = third.result!.peer;
    expect(fourth).toMatchObject({ refused: 403, error: { type: "reach_exceeded" } });
    expect(third.result!.toolSaw).toMatch(/^refused 403/);
  }, 60_000); // sized for a loaded 2-core machine
});
