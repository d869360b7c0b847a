/**
 * One of two servers whose agents call each other through reachFetch
 * (A → B → A → …): run by reach-chain.test.ts as a tsx child process with
 * NAME, PORT and PEER_URL set. Prints "listening <port>" once bound.
 */
import { Agent, Runtime, ScriptedProvider, currentReach, reachFetch } from "rein";
import { createServer, serve } from "../index";

const name = process.env["NAME"] ?? "A";
const peerUrl = process.env["PEER_URL"] ?? "";

class Hopper extends Agent {
  static methodOptions = { callPeer: { tool: true, description: "Ask the peer server's hopper to go on." } };
  peer: unknown = undefined;
  toolSaw = "";

  async hop(): Promise<unknown> {
    const reach = currentReach();
    const text = await this.ask("Go on through the peer.");
    return { server: name, depth: reach?.depth, modelSaid: text, toolSaw: this.toolSaw, peer: this.peer };
  }

  async callPeer(): Promise<string> {
    const response = await reachFetch(`${peerUrl}/v1/agent/run`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ entry: "hop" }),
    });
    const body = (await response.json()) as Record<string, unknown>;
    this.peer = response.ok ? body : { refused: response.status, ...body };
    this.toolSaw = response.ok ? `peer answered (${response.status})` : `refused ${response.status}: ${JSON.stringify(body["error"])}`;
    return this.toolSaw;
  }
}

const factory = ({ onEvent }: { onEvent: Runtime["onEvent"] }) => {
  const provider = new ScriptedProvider([
    { toolCalls: [{ name: "callPeer", input: {} }] },
    (request) => (JSON.stringify(request.messages).includes("refused 403") ? "the peer refused: reach exhausted" : "the peer answered"),
  ]);
  return new Hopper({ runtime: new Runtime({ provider, ...(onEvent === undefined ? {} : { onEvent }) }) });
};

void (async () => {
  const server = await serve({ app: createServer({ entries: { hop: [factory, "hop"] } }), port: Number(process.env["PORT"] ?? 0) });
  process.stdout.write(`listening ${server.port}\n`);
  process.on("SIGTERM", () => void server.close().then(() => process.exit(0)));
})();
