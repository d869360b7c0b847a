import fc from "fast-check";
import { Agent } from "../agent/agent";
import { ScriptedProvider } from "../model/scripted-provider";
import { currentReach } from "./reach";
import { Runtime } from "./runtime";

/**
 * Logic depth under random trees of Agent calls: each node is a method call
 * on an agent instance — the caller's own instance (a helper: no new level),
 * a plain function in between (no new level), or another agent instance (a
 * new level). Nodes throw, are aborted mid-await (their own AbortSignal or
 * the whole tree's), run their children one after another or concurrently
 * (Promise.all, whose siblings keep running after one rejects). Depth is
 * never counted up and down, so nothing can drift.
 */

type Target = "same" | "plain" | number;
type Outcome = "return" | "throw-before" | "throw-after" | "abort";

interface CallNode {
  /** Who is called: the caller's own instance, a plain function (which calls the caller's instance), or instance n of the pool. */
  readonly target: Target;
  readonly async: boolean;
  readonly outcome: Outcome;
  readonly concurrent: boolean;
  readonly children: readonly CallNode[];
}

/** Three agent classes, two instances each: two instances of one class are two agents (a new level between them). */
const INSTANCES = 6;

const target: fc.Arbitrary<Target> = fc.oneof(
  { weight: 2, arbitrary: fc.constant<Target>("same") },
  { weight: 1, arbitrary: fc.constant<Target>("plain") },
  { weight: 4, arbitrary: fc.integer({ min: 0, max: INSTANCES - 1 }) },
);
const outcome = fc.oneof(
  { weight: 6, arbitrary: fc.constant<Outcome>("return") },
  { weight: 1, arbitrary: fc.constant<Outcome>("throw-before") },
  { weight: 2, arbitrary: fc.constant<Outcome>("throw-after") },
  { weight: 1, arbitrary: fc.constant<Outcome>("abort") },
);

/** A sync node's subtree is sync (a sync method cannot await its children). */
const syncTree = (depth: number): fc.Arbitrary<CallNode> =>
  fc.record({
    target,
    async: fc.constant(false),
    outcome: outcome.map((value) => (value === "abort" ? "throw-after" : value)),
    concurrent: fc.constant(false),
    children: depth === 0 ? fc.constant([]) : fc.array(syncTree(depth - 1), { maxLength: 2 }),
  });
const tree = (depth: number): fc.Arbitrary<CallNode> =>
  fc.oneof(
    { weight: 1, arbitrary: syncTree(Math.min(depth, 2)) },
    {
      weight: 3,
      arbitrary: fc.record({
        target,
        async: fc.constant(true),
        outcome,
        concurrent: fc.boolean(),
        children: depth === 0 ? fc.constant([]) : fc.array(tree(depth - 1), { maxLength: 3 }),
      }),
    },
  );

/** Everything one tree's execution shares: the pool, what was observed, what is still running. */
interface TreeRun {
  readonly signal: AbortSignal;
  readonly mismatches: string[];
  readonly pending: Promise<unknown>[];
  checks: number;
  /** The deepest logic depth a check expected. */
  deepest: number;
}

/** One macrotask turn, or the tree's abort reason if the tree is aborted meanwhile. */
function tick(signal: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal.aborted) return reject(signal.reason);
    const onAbort = (): void => {
      clearImmediate(timer);
      reject(signal.reason);
    };
    const timer = setImmediate(() => {
      signal.removeEventListener("abort", onAbort);
      resolve();
    });
    signal.addEventListener("abort", onAbort, { once: true });
  });
}

/** Awaits work that this node's own AbortController cancels mid-await. */
function abortedMidAwait(): Promise<never> {
  const controller = new AbortController();
  setImmediate(() => controller.abort());
  return new Promise((_, reject) => controller.signal.addEventListener("abort", () => reject(controller.signal.reason), { once: true }));
}

function check(run: TreeRun, path: string, expected: number): void {
  run.checks++;
  run.deepest = Math.max(run.deepest, expected);
  const used = currentReach()?.depth.used;
  if (used !== expected) run.mismatches.push(`${path}: depth ${String(used)}, expected ${expected}`);
}

const runtime = new Runtime({
  provider: new ScriptedProvider([]),
  reach: { maxLogicDepth: 1000 },
  // The trees revisit the same methods: the guard's own ceilings must not end them first.
  recursionLimit: 100,
  maxCycleRepeats: 100,
  maxChainDepth: 500,
});

abstract class Visitor extends Agent {
  static runtime = runtime;

  visitSync(run: TreeRun, node: CallNode, path: string, depth: number): void {
    check(run, path, depth);
    if (node.outcome === "throw-before") throw new Error(`${path} throws before its children`);
    for (const [index, child] of node.children.entries()) {
      try {
        void callChild(this, run, child, `${path}.${index}`, depth);
      } catch {
        // a child's throw: this node carries on with its siblings
      }
      check(run, path, depth);
    }
    if (node.outcome === "throw-after") throw new Error(`${path} throws after its children`);
  }

  async visit(run: TreeRun, node: CallNode, path: string, depth: number): Promise<void> {
    check(run, path, depth);
    await tick(run.signal);
    check(run, path, depth);
    if (node.outcome === "throw-before") throw new Error(`${path} throws before its children`);
    if (node.outcome === "abort") await abortedMidAwait();
    // A sync child's throw becomes a rejection here, so it ends neither this node nor its siblings early.
    const children = node.children.map((child, index) => async () => callChild(this, run, child, `${path}.${index}`, depth));
    if (node.concurrent) {
      await Promise.all(children.map((start) => start())).catch(() => undefined);
    } else {
      for (const start of children) await start().catch(() => undefined);
    }
    check(run, path, depth);
    await tick(run.signal);
    check(run, path, depth);
    if (node.outcome === "throw-after") throw new Error(`${path} throws after its children`);
  }
}
class Planner extends Visitor {}
class Searcher extends Visitor {}
class Writer extends Visitor {}
const pool: Visitor[] = [new Planner(), new Planner(), new Searcher(), new Searcher(), new Writer(), new Writer()];

/**
 * Calls `node` from inside `caller`'s method at logic depth `depth`; the
 * expected depth inside it is `depth`, plus one when it enters another agent.
 * Every promise is tracked, so a sibling left running by a rejected
 * Promise.all is still checked before the tree counts as done.
 */
function callChild(caller: Visitor, run: TreeRun, node: CallNode, path: string, depth: number): unknown {
  if (node.target === "plain") {
    // A plain function between agents: its own calls are made from the caller's agent scope.
    const plain = (): unknown => {
      check(run, `${path}(plain)`, depth);
      return callChild(caller, run, { ...node, target: "same" }, path, depth);
    };
    return plain();
  }
  const callee = node.target === "same" ? caller : pool[node.target]!;
  const inside = callee === caller ? depth : depth + 1;
  if (!node.async) return callee.visitSync(run, node, path, inside);
  const promise = callee.visit(run, node, path, inside);
  run.pending.push(promise.catch(() => undefined));
  return promise;
}

/** Runs one tree from top level (its root enters pool[root] at depth 1) and waits for every call in it to settle. */
async function execute(root: CallNode, rootInstance: number, abortAfterTicks: number | undefined): Promise<TreeRun> {
  const controller = new AbortController();
  const run: TreeRun = { signal: controller.signal, mismatches: [], pending: [], checks: 0, deepest: 0 };
  if (abortAfterTicks !== undefined) {
    let ticks = 0;
    const countdown = (): void => {
      if (++ticks >= abortAfterTicks) controller.abort();
      else setImmediate(countdown);
    };
    setImmediate(countdown);
  }
  const agent = pool[rootInstance]!;
  try {
    if (root.async) await agent.visit(run, root, "root", 1);
    else agent.visitSync(run, root, "root", 1);
  } catch {
    // the property is about depth, whatever the tree threw
  }
  // Wait for stragglers (siblings of a rejected Promise.all), including those they start meanwhile.
  for (let settled = 0; settled < run.pending.length; ) {
    const batch = run.pending.slice(settled);
    settled = run.pending.length;
    await Promise.all(batch);
  }
  controller.abort();
  return run;
}

const leaf: CallNode = { target: "same", async: true, outcome: "return", concurrent: false, children: [] };

class Probe extends Agent {
  static runtime = runtime;
  depth(): number | undefined {
    return currentReach()?.depth.used;
  }
  async depthAfterAwait(): Promise<number | undefined> {
    await tick(new AbortController().signal);
    return currentReach()?.depth.used;
  }
}

/** 250 random forests by default (seconds on a loaded 2-core machine); `REIN_PROPERTY_RUNS=5000` for a deep run. */
const RUNS = Number(process.env["REIN_PROPERTY_RUNS"] ?? 250);

describe("reach: logic depth never drifts (property)", () => {
  it("inside every call of random Agent call trees — throws, aborts, concurrent siblings — depth is the Agent entries on its path; a fresh top-level call then sees depth 1", async () => {
    let checks = 0;
    let nodes = 0;
    let deepest = 0;
    const count = (node: CallNode): number => 1 + node.children.reduce((sum, child) => sum + count(child), 0);
    await fc.assert(
      fc.asyncProperty(
        fc.array(fc.tuple(tree(5), fc.integer({ min: 0, max: INSTANCES - 1 }), fc.option(fc.integer({ min: 1, max: 40 }), { freq: 2 })), {
          minLength: 1,
          maxLength: 3,
        }),
        async (trees) => {
          // Some trees run one after another, the rest at once: their calls share the process, never a depth.
          const runs = await Promise.all(trees.map(([root, instance, abortAfter]) => execute(root, instance, abortAfter ?? undefined)));
          for (const run of runs) {
            expect(run.mismatches).toEqual([]);
            checks += run.checks;
            deepest = Math.max(deepest, run.deepest);
          }
          nodes += trees.reduce((sum, [root]) => sum + count(root), 0);
          // Zero drift: at top level nothing is in force, and a new run's first entry is depth 1.
          expect(currentReach()).toBeUndefined();
          expect(new Probe().depth()).toBe(1);
          await expect(new Probe().depthAfterAwait()).resolves.toBe(1);
          const fresh: TreeRun = { signal: new AbortController().signal, mismatches: [], pending: [], checks: 0, deepest: 0 };
          for (const agent of pool) {
            await agent.visit(fresh, leaf, "fresh", 1);
            agent.visitSync(fresh, leaf, "fresh", 1);
          }
          expect(fresh.mismatches).toEqual([]);
        },
      ),
      { numRuns: RUNS },
    );
    // The trees are big enough to mean something.
    expect(nodes).toBeGreaterThan(10 * RUNS);
    expect(checks).toBeGreaterThan(15 * RUNS);
    expect(deepest).toBeGreaterThanOrEqual(5);
  }, 120_000);
});
