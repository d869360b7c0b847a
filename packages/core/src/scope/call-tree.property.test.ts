import fc from "fast-check";
import { currentChain } from "@rein/guard";
import { Agent } from "../agent/agent";
import { Context } from "../context/context";
import type { ModelProvider, ModelResponse } from "../model/model-provider";
import { ScriptedProvider } from "../model/scripted-provider";
import { Runtime } from "../runtime/runtime";
import { InMemorySessionStore } from "@rein/session";
import { SessionNodeWriter } from "@rein/session";

/**
 * Random call trees through real scoped Agent methods: sync and async calls,
 * children awaited or detached (setImmediate, queueMicrotask, a detached
 * `.then`), throws of Errors and of non-Error values, runs aborted while the
 * provider ignores the signal, and tool calls that time out. After every
 * tree settles: no frame is left on the chain, no node is left `running`,
 * and no call that failed is recorded `completed`.
 */
type Throw = "none" | "error" | "undefined" | "string" | "object";
type Start = "await" | "immediate" | "microtask" | "then";
interface Spec {
  readonly async: boolean;
  readonly throws: Throw;
  readonly start: Start;
  readonly leaf: "plain" | "abort" | "timeout";
  readonly children: readonly Spec[];
}

const throwArb = fc.constantFrom<Throw>("none", "none", "none", "error", "undefined", "string", "object");
const startArb = fc.constantFrom<Start>("await", "await", "immediate", "microtask", "then");
const leafArb = fc.oneof(
  { weight: 40, arbitrary: fc.constant("plain" as const) },
  { weight: 1, arbitrary: fc.constant("abort" as const) },
  { weight: 1, arbitrary: fc.constant("timeout" as const) },
);
/** Trees up to `depth` levels below the root, at most 3 children per call. */
function specAt(depth: number): fc.Arbitrary<Spec> {
  return fc.record({
    async: fc.boolean(),
    throws: throwArb,
    start: startArb,
    leaf: leafArb,
    children: depth === 0 ? fc.constant([]) : fc.array(specAt(depth - 1), { maxLength: 3 }),
  });
}
const specArb = specAt(3);

const never: ModelProvider = {
  specificationVersion: "rein-model-v1",
  providerId: "deaf",
  modelId: "deaf",
  complete: () => new Promise<ModelResponse>(() => {}),
  stream: () => {
    throw new Error("unused");
  },
};

function thrown(kind: Throw): unknown {
  switch (kind) {
    case "error":
      return new Error("boom");
    case "undefined":
      return undefined;
    case "string":
      return "boom";
    default:
      return { code: "boom" };
  }
}

/** How far a visit got: its body finished (earliest), and its promise settled as its caller saw it (latest). */
interface VisitState {
  bodyDone: boolean;
  settled: boolean;
}

class Tree extends Agent {
  static methodOptions = { slow: { tool: true, description: "Slow work.", timeout: 1 } };
  /** Visits launched or scheduled and not settled yet; the test waits for zero. */
  pending = 0;
  leaks: string[] = [];

  async slow() {
    await new Promise((resolve) => setTimeout(resolve, 3));
    return "late";
  }

  visit(spec: Spec, ancestors: readonly VisitState[], state: VisitState, path: string): unknown {
    // Only ancestors still running may be on the chain: at least those whose body has not finished,
    // at most those whose promise has not settled yet (the frame ends in between).
    const chain = currentChain().length - 1;
    const atLeast = ancestors.filter((a) => !a.settled && !a.bodyDone).length;
    const atMost = ancestors.filter((a) => !a.settled).length;
    if (chain < atLeast || chain > atMost) this.leaks.push(`${path}: ${chain} frames above, expected ${atLeast}..${atMost}`);
    const lineage = [...ancestors, state];
    const runChildren = (): Promise<unknown> | undefined => {
      const awaited: Promise<unknown>[] = [];
      spec.children.forEach((child, index) => {
        const tree = this;
        const launch = (): Promise<void> => launchVisit(this, child, lineage, `${path}.${index}`, child.start !== "await");
        if (child.start === "await") {
          const value = launch();
          if (value instanceof Promise) awaited.push(value);
          return;
        }
        const detached = (): void => {
          void launch();
        };
        tree.pending++;
        if (child.start === "immediate") setImmediate(detached);
        else if (child.start === "microtask") queueMicrotask(detached);
        else void Promise.resolve().then(detached);
      });
      return awaited.length > 0 ? Promise.all(awaited) : undefined;
    };
    const finish = (): unknown => {
      if (spec.leaf === "abort") return this.abortedAsk();
      if (spec.leaf === "timeout") return this.timedOutTool();
      if (spec.throws !== "none") throw thrown(spec.throws);
      return path;
    };
    if (!spec.async) {
      try {
        void runChildren();
        return finish();
      } finally {
        state.bodyDone = true;
      }
    }
    return (async () => {
      try {
        await runChildren();
        return await finish();
      } finally {
        state.bodyDone = true;
      }
    })();
  }

  /** A run whose provider ignores the signal, aborted a moment later: rejects, recorded cancelled. */
  abortedAsk(): Promise<string> {
    const controller = new AbortController();
    setImmediate(() => controller.abort());
    return this.ask("never answered", { signal: controller.signal, runtime: new Runtime({ provider: never }) });
  }

  /** A tool call that times out while its method keeps running. */
  timedOutTool(): Promise<string> {
    const model = new ScriptedProvider([{ toolCalls: [{ name: "slow" }] }, "after the timeout"]);
    return this.ask("do the slow thing", { tools: ["slow"], runtime: new Runtime({ provider: model }) });
  }
}

/** Calls `tree.visit` and marks the visit settled when its caller sees it end; never throws. */
function launchVisit(tree: Tree, spec: Spec, ancestors: readonly VisitState[], path: string, counted = false): Promise<void> {
  const state: VisitState = { bodyDone: false, settled: false };
  if (!counted) tree.pending++;
  const done = (): void => {
    state.bodyDone = true;
    state.settled = true;
    tree.pending--;
  };
  let value: unknown;
  try {
    value = tree.visit(spec, ancestors, state, path);
  } catch {
    done();
    return Promise.resolve();
  }
  if (!(value instanceof Promise)) {
    done();
    return Promise.resolve();
  }
  return value.then(done, done);
}

async function settled(tree: Tree, spec: Spec): Promise<void> {
  for (let spins = 0; tree.pending > 0 || spins < 2; spins++) {
    await new Promise((resolve) => setImmediate(resolve));
    if (spins > 100_000) throw new Error("tree never settled");
  }
  // Timed-out tool bodies finish after their run (3 ms); let them try to write.
  if (hasLeaf(spec, "timeout")) await new Promise((resolve) => setTimeout(resolve, 6));
}

function hasLeaf(spec: Spec, leaf: Spec["leaf"]): boolean {
  return spec.leaf === leaf || spec.children.some((child) => hasLeaf(child, leaf));
}

/**
 * Trees per run. The faults this test guards against, put back one at a time and each tried with 20 to 100 seeds: a
 * frame left active after a sync return, a resolve or a reject (fixed in d9c0ce2: continuations a finished call had
 * scheduled still counted it), a throw of `undefined` recorded `completed`, and a cancelled run's open nodes left
 * `running` (both fixed in ebb64e7), each failed within the first 31 trees (median 2 to 5; the cancelled run, the
 * rarest, about one tree in 7). 500 trees a run, new ones each run (fast-check seeds from the clock), is 16 times the
 * worst of those; REIN_PROPERTY_RUNS=10000 for a deep run.
 */
const RUNS = Number(process.env["REIN_PROPERTY_RUNS"] ?? 500);

it("random call trees: zero leaked frames, zero nodes left running, zero failed calls recorded completed", async () => {
  let runs = 0;
  let nodesChecked = 0;
  await fc.assert(
    fc.asyncProperty(specArb, async (spec) => {
      runs++;
      const store = new InMemorySessionStore();
      store.createSession("s", {});
      const writer = new SessionNodeWriter(store, "s");
      const tree = new Tree({ context: new Context({}, { store: writer }) });
      await launchVisit(tree, spec, [], "root");
      await settled(tree, spec);
      writer.flush();
      const nodes = store.readNodes("s");
      nodesChecked += nodes.length;
      const failed = nodes.filter((n) => n.metadata["status"] === "error" || n.metadata["status"] === "cancelled");
      // One expect per tree (jest's expect costs about 50 µs a call).
      expect({
        chain: currentChain().length,
        leaks: tree.leaks,
        running: nodes.filter((n) => n.metadata["status"] === "running").map((n) => n.name),
        failedVisits: failed.filter((n) => n.name === "Tree.visit").length,
      }).toEqual({ chain: 0, leaks: [], running: [], failedVisits: countFailures(spec) });
    }),
    { numRuns: RUNS },
  );
  expect(runs).toBeGreaterThanOrEqual(RUNS);
  expect(nodesChecked).toBeGreaterThan(runs);
}, 600_000);

/** Visits that must end `error` or `cancelled`: those that throw, abort, or whose run was aborted. */
function countFailures(spec: Spec): number {
  let count = spec.leaf === "abort" || (spec.leaf === "plain" && spec.throws !== "none") ? 1 : 0;
  for (const child of spec.children) count += countFailures(child);
  return count;
}
