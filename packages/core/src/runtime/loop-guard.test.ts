import { PostCompactionLoopPersistedError, ToolLoopError, ContextOverflowError } from "@rein/guard";
import { Agent } from "../agent/agent";
import type { ContentBlock } from "../model/content";
import type { ModelRequest } from "../model/model-provider";
import { ScriptedProvider } from "../model/scripted-provider";
import { tool } from "../tools/tool";
import { Context } from "../context/context";
import { InMemorySessionStore } from "@rein/session";
import { SessionNodeWriter } from "@rein/session";
import { Runtime } from "./runtime";
import type { RuntimeEvent } from "./runtime-events";

const lastUser = (request: ModelRequest): readonly ContentBlock[] => request.messages[request.messages.length - 1].content;
const texts = (blocks: readonly ContentBlock[]) => blocks.flatMap((b) => (b.type === "text" ? [b.text] : []));

function stuckModel(name = "status", input: unknown = { job: "42" }) {
  return new ScriptedProvider([{ toolCalls: [{ name, input }] }], { whenExhausted: "repeat-last" });
}

function counterTool(name = "status", result: () => unknown = () => "still running") {
  const runs = { count: 0 };
  const t = tool({
    name,
    description: "Check the job.",
    parameters: { type: "object", properties: { job: { type: "string" } } },
    execute: () => {
      runs.count++;
      return result();
    },
  });
  return { tool: t, runs };
}

describe("tool-loop detection in the runtime", () => {
  it("is on by default in the Runtime: warned at the 10th identical call, blocked from the 20th, ToolLoopError at the 3rd block", async () => {
    const { tool: status, runs } = counterTool();
    const model = stuckModel();
    const events: RuntimeEvent[] = [];
    const runtime = new Runtime({ provider: model, maxIterations: 60, onEvent: (e) => events.push(e) });
    await expect(runtime.exec({ content: "wait for job 42", tools: [status] })).rejects.toThrow(ToolLoopError);
    const warnings = events.filter((e) => e.type === "loop-warning");
    const blocks = events.filter((e) => e.type === "loop-block");
    expect(warnings.map((e) => (e as { count: number }).count)).toEqual([10]);
    expect(blocks).toHaveLength(3);
    // 20 calls ran (the 11th, following 10 identical ones, was warned); the next three were blocked and never ran.
    expect(runs.count).toBe(20);
    // The warning reached the model in the user turn right after that call, long before anything was blocked.
    expect(texts(lastUser(model.requests[10])).some((text) => /^WARNING: .*status/.test(text))).toBe(false);
    expect(texts(lastUser(model.requests[11])).some((text) => /^WARNING: .*status/.test(text))).toBe(true);
  });

  it("with the default maxIterations (20) a stuck loop is warned at the 10th call and ends with MaxIterationsExceededError", async () => {
    const { tool: status, runs } = counterTool();
    const events: RuntimeEvent[] = [];
    const runtime = new Runtime({ provider: stuckModel(), onEvent: (e) => events.push(e) });
    await expect(runtime.exec({ content: "wait for job 42", tools: [status] })).rejects.toThrow("maxIterations 20");
    expect(runs.count).toBe(20);
    expect(events.filter((e) => e.type === "loop-warning")).toHaveLength(1);
    expect(events.filter((e) => e.type === "loop-block")).toHaveLength(0);
  });

  it("is off when the runtime or the agent says enabled: false: 25 identical calls are neither warned about nor blocked", async () => {
    for (const options of [{ runtime: { enabled: false } }, { agent: { enabled: false } }] as const) {
      const { tool: status, runs } = counterTool();
      const events: RuntimeEvent[] = [];
      const runtime = new Runtime({
        provider: stuckModel(),
        maxIterations: 25,
        onEvent: (e) => events.push(e),
        ...("runtime" in options ? { loopDetection: options.runtime } : {}),
      });
      const loopDetection = "agent" in options ? options.agent : undefined;
      await expect(runtime.exec({ content: "wait for job 42", tools: [status], loopDetection })).rejects.toThrow("maxIterations 25");
      expect(runs.count).toBe(25);
      expect(events.some((e) => e.type === "loop-warning" || e.type === "loop-block")).toBe(false);
    }
  });

  it("shows a warning to the model at the start of its next user turn (after the tool results)", async () => {
    const { tool: status } = counterTool();
    const model = new ScriptedProvider([
      ...Array.from({ length: 4 }, () => ({ toolCalls: [{ name: "status", input: { job: "42" } }] })),
      "I will stop polling.",
    ]);
    const events: RuntimeEvent[] = [];
    const runtime = new Runtime({
      provider: model,
      loopDetection: { enabled: true, warningThreshold: 3, criticalThreshold: 10, globalCircuitBreakerThreshold: 20 },
      onEvent: (e) => events.push(e),
    });
    await runtime.exec({ content: "wait", tools: [status] });
    // The 4th identical call follows 3 recorded ones: warning; the model sees it in request 5.
    const seen = lastUser(model.requests[4]);
    expect(seen[0].type).toBe("tool_result");
    expect(texts(seen)[0]).toMatch(/^WARNING: .*status/);
    expect(texts(lastUser(model.requests[3]))).toEqual([]);
    expect(events.filter((e) => e.type === "loop-warning")).toHaveLength(1);
  });

  it("blocks a critical call (the tool does not run) and ends the run with ToolLoopError on the third block", async () => {
    const { tool: status, runs } = counterTool();
    const model = stuckModel();
    const events: RuntimeEvent[] = [];
    const runtime = new Runtime({
      provider: model,
      loopDetection: { enabled: true, warningThreshold: 2, criticalThreshold: 4, globalCircuitBreakerThreshold: 30 },
      onEvent: (e) => events.push(e),
    });
    const error = await runtime.exec({ content: "wait", tools: [status] }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ToolLoopError);
    expect(error).toMatchObject({ toolName: "status" });
    // 4 calls ran; calls 5 and 6 were blocked without running; the 7th block... the third block ends it.
    expect(runs.count).toBe(4);
    const blocked = events.filter((e) => e.type === "loop-block");
    expect(blocked).toHaveLength(3);
    const firstBlock = model.requests[5].messages[model.requests[5].messages.length - 1].content[0];
    expect(firstBlock).toMatchObject({ type: "tool_result", isError: true });
    expect(JSON.parse(String((firstBlock as { content: string }).content))).toMatchObject({ status: "blocked", reason: "tool-loop" });
    expect(model.requests).toHaveLength(7);
  });

  it("takes per-agent overrides (static loopDetection) over the runtime's settings, field by field", async () => {
    const { tool: status, runs } = counterTool();
    class Poller extends Agent {
      static loopDetection = { enabled: true, criticalThreshold: 3, warningThreshold: 2 };
    }
    const runtime = new Runtime({ provider: stuckModel(), loopDetection: { maxBlockedCalls: 1, criticalThreshold: 50 } });
    await expect(new Poller({ runtime, tools: [status] }).ask("wait")).rejects.toBeInstanceOf(ToolLoopError);
    expect(runs.count).toBe(3);
  });

  it("compacts on a context overflow, retries, and records a summary node", async () => {
    const { tool: status } = counterTool("status", (() => { let n = 0; return () => `progress ${++n}`; })());
    const model = new ScriptedProvider([
      { toolCalls: [{ name: "status", input: { job: "1" } }] },
      { toolCalls: [{ name: "status", input: { job: "1" } }] },
      new ContextOverflowError("prompt is too long", { provider: "scripted", status: 400 }),
      "Job 1 was checked twice; it is progressing.",
      "Done: job 1 finished.",
    ]);
    const events: RuntimeEvent[] = [];
    const store = new InMemorySessionStore();
    store.createSession("s", {});
    const writer = new SessionNodeWriter(store, "s");
    const result = await new Runtime({ provider: model, onEvent: (e) => events.push(e) }).exec({
      content: "watch job 1",
      tools: [status],
      context: new Context({}, { store: writer }),
    });
    expect(result.text).toBe("Done: job 1 finished.");
    const summaryRequest = model.requests[3];
    expect(summaryRequest.tools).toEqual([]);
    expect(JSON.stringify(summaryRequest.messages)).toContain("progress 1");
    const retried = model.requests[4];
    expect(texts(retried.messages[0].content).join("\n")).toContain("[Summary of the earlier conversation]\nJob 1 was checked twice");
    expect(retried.messages[1].role).toBe("assistant");
    expect(events.filter((e) => e.type === "context-compacted")).toHaveLength(1);
    writer.flush();
    const summary = store.readNodes("s").find((node) => node.name === "Runtime.compact");
    expect(summary).toMatchObject({ output: "Job 1 was checked twice; it is progressing.", metadata: { kind: "compaction" } });
  });

  it("aborts with PostCompactionLoopPersistedError when the same loop fills the window right after compaction", async () => {
    const { tool: status } = counterTool("status", () => "still running");
    const call = { toolCalls: [{ name: "status", input: { job: "7" } }] };
    const model = new ScriptedProvider([
      call,
      call,
      new ContextOverflowError("context_length_exceeded", { provider: "scripted", status: 400 }),
      "Polled job 7 twice, still running.",
      call,
      call,
      call,
      "never reached",
    ]);
    const error = await new Runtime({ provider: model }).exec({ content: "watch job 7", tools: [status] }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(PostCompactionLoopPersistedError);
    expect(error).toMatchObject({ detector: "compaction_loop_persisted", toolName: "status", count: 3 });
    expect(model.requests).toHaveLength(7);
  });

  it("does not abort after compaction when the results change", async () => {
    let n = 0;
    const { tool: status } = counterTool("status", () => `step ${++n}`);
    const call = { toolCalls: [{ name: "status", input: { job: "7" } }] };
    const model = new ScriptedProvider([
      call,
      new ContextOverflowError("too long", { provider: "scripted", status: 400 }),
      "summary",
      call,
      call,
      call,
      "finished",
    ]);
    await expect(new Runtime({ provider: model }).exec({ content: "watch", tools: [status] })).resolves.toMatchObject({ text: "finished" });
  });
});
