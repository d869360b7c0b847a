import { z } from "zod";
import { Agent } from "../agent/agent";
import { ChatAgent } from "../agent/chat-agent";
import { OutputValidationError } from "@rein/guard";
import { ScriptedProvider } from "../model/scripted-provider";
import { Runtime } from "./runtime";

const Weather = z.object({ city: z.string(), tempC: z.number() });

class Forecaster extends Agent {
  static methodOptions = { lookup: { tool: true, description: "Current temperature of a city." } };
  lookup(city: string): string {
    return `${city}: 21.5 C`;
  }
}

const forecaster = (model: ScriptedProvider) => new Forecaster({ runtime: new Runtime({ provider: model }) });

describe("ask({ responseFormat })", () => {
  it("resolves with the validated, typed value; the request carries the format for the provider's native structured output", async () => {
    const model = new ScriptedProvider(['{"city":"Oslo","tempC":4}']);
    const weather = await forecaster(model).ask("Weather in Oslo?", { responseFormat: Weather });
    // Typed from the zod schema: a wrong field would not compile.
    const tempC: number = weather.tempC;
    expect(weather).toEqual({ city: "Oslo", tempC: 4 });
    expect(tempC).toBe(4);
    expect(model.requests[0]!.responseFormat).toMatchObject({
      name: "response",
      schema: { type: "object", properties: { city: { type: "string" }, tempC: { type: "number" } } },
    });
  });

  it("tools first, then the structured final answer, in the same loop", async () => {
    const model = new ScriptedProvider([{ toolCalls: [{ name: "lookup", input: { city: "Rome" } }] }, '{"city":"Rome","tempC":21.5}']);
    await expect(forecaster(model).ask("Weather in Rome?", { responseFormat: Weather })).resolves.toEqual({ city: "Rome", tempC: 21.5 });
    expect(model.requests).toHaveLength(2);
  });

  it("an answer that does not validate gets one repair request naming the problems; a valid repair resolves", async () => {
    const model = new ScriptedProvider(['{"city":"Oslo","tempC":"cold"}', '```json\n{"city":"Oslo","tempC":-3}\n```']);
    await expect(forecaster(model).ask("Weather in Oslo?", { responseFormat: Weather })).resolves.toEqual({ city: "Oslo", tempC: -3 });
    expect(model.requests).toHaveLength(2);
    const repair = JSON.stringify(model.requests[1]!.messages.at(-1));
    expect(repair).toContain("does not match the required response format");
    expect(repair).toContain("tempC");
    // The repair asks for the final answer itself (the adapters' contract: Anthropic forces its format tool).
    expect(model.requests[1]!.toolChoice).toEqual({ type: "tool", name: "response" });
    expect(model.requests[0]!.toolChoice).toBeUndefined();
  });

  it("still invalid after the repair: OutputValidationError with the issues, after exactly two requests", async () => {
    const model = new ScriptedProvider(["It is cold in Oslo.", '{"city":"Oslo"}']);
    const error = await forecaster(model)
      .ask("Weather in Oslo?", { responseFormat: Weather })
      .catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(OutputValidationError);
    expect((error as OutputValidationError).issues.join(" ")).toMatch(/tempC/);
    expect((error as OutputValidationError).answer).toBe('{"city":"Oslo"}');
    expect(JSON.stringify(model.requests[1]!.messages.at(-1))).toContain("the answer is not JSON");
    expect(model.requests).toHaveLength(2);
  });

  it("a JSON Schema works too (the value is unknown-typed); stream().result carries it as output", async () => {
    const schema = { type: "object", title: "Weather report", properties: { ok: { type: "boolean" } }, required: ["ok"], additionalProperties: false };
    const model = new ScriptedProvider(['{"ok":true}', '{"ok":false}']);
    const agent = forecaster(model);
    await expect(agent.ask("Fine?", { responseFormat: schema })).resolves.toEqual({ ok: true });
    expect(model.requests[0]!.responseFormat).toMatchObject({ name: "Weather_report", strict: true });
    const result = await agent.stream("Fine?", { responseFormat: schema }).result;
    expect(result).toMatchObject({ status: "completed", output: { ok: false } });
  });

  it("a responseFormat that is not a schema object is a TypeError naming the option", async () => {
    const agent = forecaster(new ScriptedProvider(["{}"]));
    await expect(agent.ask("x", { responseFormat: "json" as never })).rejects.toThrow(/responseFormat/);
    await expect(agent.ask("x", { responseFormat: { type: "array" } })).rejects.toThrow(/responseFormat.*object/);
  });
});

describe("an Agent-level responseFormat", () => {
  type Weather = z.infer<typeof Weather>;
  class WeatherAgent extends Agent<Weather> {
    static responseFormat = Weather;
    static methodOptions = { lookup: { tool: true, description: "Current temperature of a city." } };
    lookup(city: string): string {
      return `${city}: 4 C`;
    }
  }

  it("as a class default: every ask answers in it, typed by the class's type parameter; a per-call format wins", async () => {
    const model = new ScriptedProvider(['{"city":"Oslo","tempC":4}', '{"ok":true}']);
    const agent = new WeatherAgent({ runtime: new Runtime({ provider: model }) });
    const weather = await agent.ask("Weather in Oslo?");
    const tempC: number = weather.tempC;
    expect(tempC).toBe(4);
    await expect(agent.ask("Fine?", { responseFormat: z.object({ ok: z.boolean() }) })).resolves.toEqual({ ok: true });
    expect(model.requests.map((request) => request.responseFormat?.schema["properties"])).toEqual([
      expect.objectContaining({ tempC: { type: "number" } }),
      expect.objectContaining({ ok: { type: "boolean" } }),
    ]);
  });

  it("as a constructor option; choose() still answers with an option id in plain text", async () => {
    const model = new ScriptedProvider(['{"ok":false}', "b"]);
    const agent = new Agent<{ ok: boolean }>({ runtime: new Runtime({ provider: model }), responseFormat: z.object({ ok: z.boolean() }) });
    await expect(agent.ask("Fine?")).resolves.toEqual({ ok: false });
    await expect(agent.choose("Pick one.", ["a", "b"])).resolves.toBe("b");
    expect(model.requests[1]!.responseFormat).toBeUndefined();
  });

  it("an Agent-level responseFormat that is not a schema object is a TypeError naming the option", () => {
    expect(() => new Agent({ responseFormat: "json" as never })).toThrow(/responseFormat/);
  });
});

describe("the repair bound across a paused turn", () => {
  class Deployer extends ChatAgent {
    static responseFormat = Weather;
    static methodOptions = { deploy: { tool: true, description: "Deploy the service.", requiresApproval: true } };
    deploy(): string {
      return "deployed";
    }
  }

  it("a turn that repaired its answer, then paused for an approval and resumed, is not repaired again: a second invalid answer is OutputValidationError", async () => {
    // Invalid answer → the one repair request → a call that needs approval (the turn pauses) → invalid again after the resume.
    const model = new ScriptedProvider(["It is cold.", { toolCalls: [{ name: "deploy", input: {} }] }, '{"city":"Oslo"}', '{"city":"Oslo","tempC":4}']);
    const agent = new Deployer({ runtime: new Runtime({ provider: model }) });
    const paused = await agent.runTurn({ input: "Deploy, then report the weather." });
    expect(paused.status).toBe("paused");
    // The continuation as JSON: what a server or another process would hold.
    const turn = await agent.resumeTurn(JSON.parse(JSON.stringify(paused.continuation)), { approve: true });
    expect(turn.status).toBe("error");
    expect(turn.error).toBeInstanceOf(OutputValidationError);
    expect((turn.error as OutputValidationError).answer).toBe('{"city":"Oslo"}');
    // One repair request in the whole turn, as within one run: never a fourth request.
    expect(model.requests).toHaveLength(3);
  });
});
