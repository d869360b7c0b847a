import { Agent } from "../agent/agent";
import { ScriptedProvider, type ScriptedTurn } from "../model/scripted-provider";
import { tool } from "../tools/tool";
import { Runtime } from "./runtime";
import type { RuntimeEvent } from "./runtime-events";

/**
 * Loop detection is on by default in the Runtime: legitimate work that looks
 * like a loop must never be warned about or blocked. Every test runs with the
 * default settings and asserts zero loop events.
 */
function watched(provider: ScriptedProvider, extra: { maxIterations?: number } = {}) {
  const events: RuntimeEvent[] = [];
  const runtime = new Runtime({ provider, maxIterations: extra.maxIterations ?? 60, onEvent: (e) => events.push(e) });
  const loopEvents = () => events.filter((e) => e.type === "loop-warning" || e.type === "loop-block");
  return { runtime, events, loopEvents };
}

const calls = (...toolCalls: { name: string; input?: unknown }[]): ScriptedTurn => ({ toolCalls });

describe("no false loop warnings or blocks on legitimate look-alikes (defaults on)", () => {
  it("40 varied calls in one loop, batched 4 per turn", async () => {
    const fetchPage = tool({
      name: "fetch_page",
      description: "Fetch a page.",
      parameters: { type: "object", properties: { url: { type: "string" } }, required: ["url"] },
      execute: ({ url }: { url: string }) => `contents of ${url}`,
    });
    const turns: ScriptedTurn[] = [];
    for (let turn = 0; turn < 10; turn++) {
      turns.push(calls(...Array.from({ length: 4 }, (_, i) => ({ name: "fetch_page", input: { url: `https://example.test/${turn * 4 + i}` } }))));
    }
    const model = new ScriptedProvider([...turns, "summarised 40 pages"]);
    const { runtime, loopEvents, events } = watched(model);
    await expect(runtime.exec({ content: "read all pages", tools: [fetchPage] })).resolves.toMatchObject({ text: "summarised 40 pages" });
    expect(events.filter((e) => e.type === "tool-result")).toHaveLength(40);
    expect(loopEvents()).toEqual([]);
  });

  it("40 steps across four sub-agents, each doing similar work", async () => {
    const provider = new ScriptedProvider(
      [
        (request) => {
          const prompt = JSON.stringify(request.messages[0]);
          const worker = /worker (\d)/.exec(prompt)?.[1] ?? "0";
          const done = request.messages.filter((m) => m.role === "assistant").length;
          return done < 10 ? calls({ name: "step", input: { worker, n: done } }) : `worker ${worker} finished`;
        },
      ],
      { whenExhausted: "repeat-last" },
    );
    class Worker extends Agent {
      static methodOptions = { step: { tool: true, description: "Do one step." } };
      step(worker: string, n: number) {
        return `worker ${worker} step ${n} done`;
      }
      async work(id: number) {
        return this.ask(`You are worker ${id}. Do ten steps.`, { tools: ["step"] });
      }
    }
    const events: RuntimeEvent[] = [];
    const runtime = new Runtime({ provider, onEvent: (e) => events.push(e) });
    const workers = [1, 2, 3, 4].map(() => new Worker({ runtime }));
    const answers = [];
    for (const [i, worker] of workers.entries()) answers.push(await worker.work(i + 1));
    expect(answers).toEqual(["worker 1 finished", "worker 2 finished", "worker 3 finished", "worker 4 finished"]);
    expect(events.filter((e) => e.type === "tool-result")).toHaveLength(40);
    expect(events.filter((e) => e.type === "loop-warning" || e.type === "loop-block")).toEqual([]);
  });

  it("a poll whose result changes every time (15 polls)", async () => {
    let progress = 0;
    const status = tool({
      name: "job_status",
      description: "Poll the job.",
      poll: true,
      parameters: { type: "object", properties: { job: { type: "string" } } },
      execute: () => ({ job: "42", percent: (progress += 6) }),
    });
    const model = new ScriptedProvider([...Array.from({ length: 15 }, () => calls({ name: "job_status", input: { job: "42" } })), "done at 90%"]);
    const { runtime, loopEvents } = watched(model);
    await runtime.exec({ content: "wait for job 42", tools: [status] });
    expect(progress).toBe(90);
    expect(loopEvents()).toEqual([]);
  });

  it("read/append alternation that makes progress", async () => {
    const lines: string[] = [];
    const read = tool({ name: "read_file", description: "Read.", parameters: { type: "object", properties: {} }, execute: () => lines.join("\n") });
    const append = tool({
      name: "append_line",
      description: "Append.",
      parameters: { type: "object", properties: { line: { type: "string" } } },
      execute: ({ line }: { line: string }) => {
        lines.push(line);
        return `ok, ${lines.length} lines`;
      },
    });
    const turns: ScriptedTurn[] = [];
    for (let i = 0; i < 15; i++) turns.push(calls({ name: "read_file", input: {} }), calls({ name: "append_line", input: { line: `line ${i}` } }));
    const model = new ScriptedProvider([...turns, "file written"]);
    const { runtime, loopEvents } = watched(model);
    await runtime.exec({ content: "write the file", tools: [read, append] });
    expect(lines).toHaveLength(15);
    expect(loopEvents()).toEqual([]);
  });

  it("A→B→A→B with different arguments each time", async () => {
    const lookup = tool({
      name: "lookup",
      description: "Look up.",
      parameters: { type: "object", properties: { term: { type: "string" } } },
      execute: ({ term }: { term: string }) => `definition of ${term}`,
    });
    const translate = tool({
      name: "translate",
      description: "Translate.",
      parameters: { type: "object", properties: { text: { type: "string" } } },
      execute: ({ text }: { text: string }) => `translated ${text}`,
    });
    const turns: ScriptedTurn[] = [];
    for (let i = 0; i < 15; i++) turns.push(calls({ name: "lookup", input: { term: `term ${i}` } }), calls({ name: "translate", input: { text: `text ${i}` } }));
    const model = new ScriptedProvider([...turns, "glossary done"]);
    const { runtime, loopEvents } = watched(model);
    await runtime.exec({ content: "build the glossary", tools: [lookup, translate] });
    expect(loopEvents()).toEqual([]);
  });

  it("a recursive method of depth 4 that asks the model at each level", async () => {
    class Splitter extends Agent {
      static methodOptions = { split: { tool: true, description: "Split a task in two and solve the halves." } };
      async split(level: number): Promise<string> {
        if (level >= 4) return `leaf at ${level}`;
        return this.ask(`solve level ${level}`, { tools: ["split"] });
      }
    }
    const provider = new ScriptedProvider(
      [
        (request) => {
          const level = Number(/solve level (\d)/.exec(JSON.stringify(request.messages[request.messages.length - 1]))?.[1] ?? -1);
          const answered = request.messages[request.messages.length - 1]?.content.some((b) => b.type === "tool_result");
          return answered ? "solved" : calls({ name: "split", input: { level: level + 1 } });
        },
      ],
      { whenExhausted: "repeat-last" },
    );
    const events: RuntimeEvent[] = [];
    const splitter = new Splitter({ runtime: new Runtime({ provider, onEvent: (e) => events.push(e) }) });
    await expect(splitter.split(0)).resolves.toBe("solved");
    expect(events.filter((e) => e.type === "tool-result")).toHaveLength(4);
    expect(events.filter((e) => e.type === "loop-warning" || e.type === "loop-block" || e.type === "guard-refusal")).toEqual([]);
  });
});
