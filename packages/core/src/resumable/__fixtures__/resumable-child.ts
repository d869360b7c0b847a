// A worker process for the resumable-run crash tests: starts a run and stops
// at a chosen point (the test SIGKILLs it there), or resumes interrupted runs.
// Every step function appends its name to the calls file when it is called.
// "lease-a" / "lease-b": two workers of one run — A stalls inside a step past
// its lease, B resumes the run and finishes it.
import { appendFileSync } from "node:fs";
import {
  Agent,
  Context,
  RunNotResumableError,
  Runtime,
  ScriptedProvider,
  SessionStore,
  parallel,
  resumeInterrupted,
  resumeRun,
  step,
  workflow,
} from "@rein/core";

const [mode, path, callsFile, stopAt = ""] = process.argv.slice(2) as [string, string, string, string?];

const called = (name: string): void => appendFileSync(callsFile!, `${name}\n`);
const forever = (label: string): Promise<never> => {
  console.log(label);
  return new Promise<never>(() => setInterval(() => undefined, 60_000));
};

async function fetchPage(url: string): Promise<string> {
  called("fetch");
  return `<p>${url}</p>`;
}

function words(page: string): string[] {
  called("words");
  return page.replace(/<[^>]+>/g, " ").trim().split(/\s+/);
}

let store: SessionStore;
const sleepSync = (ms: number): void => void Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, ms);

// The "work" step of handOver. Worker A's event loop blocks inside it (nothing renews its lease) until
// another worker has finished the run; then it returns its own result, too late.
async function work(text: string): Promise<string> {
  called(`work ${mode}`);
  if (mode !== "lease-a") return `B's work on ${text}`;
  const runId = store.listRuns().at(-1)!.runId;
  const deadline = Date.now() + 150_000;
  while (store.getRun(runId)!.state !== "completed") {
    if (Date.now() > deadline) throw new Error(`no other worker finished run ${runId}`);
    sleepSync(10);
  }
  return `A's work on ${text}`;
}

let blocked = 0;
async function score(list: string[]): Promise<number> {
  called("score");
  if (stopAt === "inside") await forever("inside score");
  if (mode === "many" && ++blocked === Number(stopAt)) await forever("ready");
  if (mode === "many") await new Promise<never>(() => setInterval(() => undefined, 60_000));
  return list.join("").length;
}

class Pipeline extends Agent {
  static methodOptions = {
    process: { resumable: true },
    fan: { resumable: true },
    charge: { resumable: true },
    review: { resumable: true },
    handOver: { resumable: { leaseMs: 300 } },
    publish: {
      tool: true,
      requiresApproval: true,
      description: "Publish a text.",
      parameters: { type: "object", properties: { text: { type: "string" } }, required: ["text"] },
    },
  };
  // review's model: publish the draft (a call that needs a person's approval), then say so.
  static runtime = new Runtime({
    provider: new ScriptedProvider([{ toolCalls: [{ name: "publish", input: { text: "the draft" } }] }, "published"]),
  });

  async review(doc: string): Promise<string> {
    const draft = await step("draft", async (d: string) => (called("draft"), `draft of ${d}`), doc);
    return step("ask", async (text: string) => this.ask(`Publish: ${text}`), draft);
  }

  publish(text: string): string {
    called("publish");
    return `published ${text}`;
  }

  async charge(order: string): Promise<string> {
    const amount = await step("price", async (id: string) => (called("price"), id.length * 100), order);
    const receipt = await step({ name: "pay", external: true }, async (id: string, cents: number) => {
      called("pay");
      if (stopAt === "external") await forever("inside pay");
      return `paid ${cents} for ${id}`;
    }, order, amount);
    return step("notify", async (text: string) => (called("notify"), `sent: ${text}`), receipt);
  }

  async handOver(doc: string): Promise<string> {
    const fetched = await step("fetch", async (d: string) => (called("fetch"), `fetched ${d}`), doc);
    return step("work", work, fetched);
  }

  async process(url: string): Promise<{ words: string[]; score: number; label: string }> {
    const page = await step("fetch", fetchPage, url);
    const list = step("words", words, page);
    if (stopAt === "between") await forever("between words and score");
    const total = await step("score", score, list);
    const label = await workflow("label", async (n: number) => step("format", async (v: number) => (called("format"), `score ${v}`), n), total);
    return { words: list, score: total, label };
  }

  async fan(seed: number): Promise<unknown> {
    let rightSaved!: () => void;
    const rightDone = new Promise<void>((done) => (rightSaved = done));
    const branch = async (name: string, value: number): Promise<number> => {
      const a = await step("a", async (v: number) => (called(`${name}.a`), v + 1), value);
      const b = await step("b", async (v: number) => {
        called(`${name}.b`);
        // Killed once the right branch's last step is saved.
        if (stopAt === "parallel" && name === "left") await rightDone.then(() => forever("inside left.b"));
        return v * 10;
      }, a);
      const c = await step("c", async (v: number) => (called(`${name}.c`), v + 1), b);
      if (name === "right") rightSaved();
      return c;
    };
    return parallel({ left: [branch, "left", seed], right: [branch, "right", seed + 100] });
  }
}

async function main(): Promise<void> {
  store = new SessionStore({ path });
  if (!store.hasSession("s")) store.createSession("s");
  // A person who never answers while the review waits (the test kills the process then); one who approves on resume.
  const approveToolCall = mode === "review" ? () => forever("awaiting approval") : () => true;
  const pipeline = new Pipeline({ context: Context.forSession(store, "s"), approveToolCall });
  if (mode === "start" || mode === "fan" || mode === "charge" || mode === "review") {
    const running =
      mode === "start" ? pipeline.process("https://example.test/a b") : mode === "fan" ? pipeline.fan(1) : mode === "charge" ? pipeline.charge("order-7") : pipeline.review("notes");
    console.log(`run ${store.listRuns().at(-1)!.runId}`);
    console.log(`result ${JSON.stringify(await running)}`);
  } else if (mode === "many") {
    for (let index = 0; index < Number(stopAt); index++) void pipeline.process(`https://example.test/${index}`);
    await new Promise<never>(() => setInterval(() => undefined, 60_000));
  } else if (mode === "resume-run") {
    console.log(`result ${JSON.stringify(await resumeRun(stopAt))}`);
  } else if (mode === "lease-a") {
    const running = pipeline.handOver("report");
    console.log(`run ${store.listRuns().at(-1)!.runId}`);
    const outcome = await running.then(
      (result) => ({ result }),
      (error: { name?: string; kind?: string; cause?: Record<string, unknown> }) => ({
        error: { name: error.name, kind: error.kind, cause: error.cause && { name: error.cause["name"], runId: error.cause["runId"], heldEpoch: error.cause["heldEpoch"], currentEpoch: error.cause["currentEpoch"] } },
      }),
    );
    console.log(`outcome ${JSON.stringify(outcome)}`);
  } else if (mode === "lease-b") {
    // Worker A's lease holds until it expires: ask again until then.
    for (const deadline = Date.now() + 150_000; ; ) {
      try {
        console.log(`result ${JSON.stringify(await resumeRun(stopAt))}`);
        break;
      } catch (error) {
        if (!RunNotResumableError.isInstance(error) || Date.now() > deadline) throw error;
        await new Promise((done) => setTimeout(done, 20));
      }
    }
  } else {
    const report = await resumeInterrupted();
    console.log(
      `report ${JSON.stringify({
        resumed: report.resumed.map(({ runId, status, result, error }) => ({ runId, status, result, error: error === undefined ? undefined : String(error) })),
        leftAlone: report.leftAlone,
      })}`,
    );
  }
  store.close();
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
