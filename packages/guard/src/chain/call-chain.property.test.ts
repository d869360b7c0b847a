import fc from "fast-check";
import { AsyncResource } from "node:async_hooks";
import { setTimeout as sleep } from "node:timers/promises";
import { currentChain, depthOf, runInFrame, withFrameData } from "./call-chain";
import { findTailCycle } from "./cycle";
import type { Frame } from "./frame";

interface CallTree {
  fn: number;
  throws: boolean;
  async: boolean;
  children: CallTree[];
}

const FUNCTIONS = 4;
const frames = Array.from({ length: FUNCTIONS }, (_, i) => ({ key: `prop:${i}`, name: `f${i}` }));

/** Trees up to 7 levels deep: deep enough to hit the recursion ceiling and cycle detection. */
const treeOfDepth = (depth: number): fc.Arbitrary<CallTree> =>
  fc.record({
    fn: fc.integer({ min: 0, max: FUNCTIONS - 1 }),
    throws: fc.boolean(),
    async: fc.boolean(),
    children: depth === 0 ? fc.constant([]) : fc.array(treeOfDepth(depth - 1), { maxLength: 2 }),
  });
const tree = treeOfDepth(7);

/** Runs the tree, swallowing every error (injected throws and guard refusals alike). */
async function execute(node: CallTree): Promise<void> {
  try {
    await runInFrame(frames[node.fn], async () => {
      if (node.async) await sleep(0);
      if (node.throws && Math.random() < 0.5) throw new Error("injected before children");
      await Promise.all(node.children.map(execute));
      if (node.throws) throw new Error("injected after children");
    });
  } catch {
    // expected: the property is about what is left afterwards
  }
}

describe("call chain (property)", () => {
  it("after any run of random call trees with random throws, the chain is empty and no count leaked", async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(tree, { minLength: 1, maxLength: 4 }), async (roots) => {
        await Promise.all(roots.map(execute));
        expect(currentChain()).toHaveLength(0);
        for (const frame of frames) expect(depthOf(frame.key)).toBe(0);
      }),
      { numRuns: 150 },
    );
  });

  it("inside any frame, depthOf equals the number of matching frames on currentChain", async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(fc.integer({ min: 0, max: FUNCTIONS - 1 }), { minLength: 1, maxLength: 12 }), async (path) => {
        const check = async (i: number): Promise<void> => {
          if (i === path.length) return;
          await runInFrame(frames[path[i]], async () => {
            await sleep(0);
            const chain = currentChain();
            for (const frame of frames) {
              expect(depthOf(frame.key)).toBe(chain.filter((f) => f.key === frame.key).length);
            }
            await check(i + 1);
          }).catch(() => undefined);
        };
        await check(0);
      }),
      { numRuns: 100 },
    );
  });

  it("after random trees with detached continuations and throws of any value, no active frame leaks", async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(detachedTree, { minLength: 1, maxLength: 3 }), async (roots) => {
        const run = new DetachedRun();
        for (const root of roots) run.track(run.execute(root, undefined));
        await run.settled();
        expect(run.mismatches).toEqual([]);
        expect(currentChain()).toHaveLength(0);
        for (const frame of frames) expect(depthOf(frame.key)).toBe(0);
        // Code still holding a finished call's async context (a late timer, a stored callback) sees no frame either.
        for (const lateCallback of run.lateCallbacks) expect(lateCallback()).toEqual({ chain: 0, depths: [0, 0, 0, 0] });
      }),
      { numRuns: 120 },
    );
  });
});

/** How a call starts a child: awaited (or run inline by a sync body), or scheduled and left running. */
type Start = "inline" | keyof typeof SCHEDULE;
/** What a call throws, if anything: Errors and non-Error values alike. */
type Thrown = "nothing" | "error" | "undefined" | "string" | "null";

interface DetachedTree {
  fn: number;
  async: boolean;
  thrown: Thrown;
  throwsFirst: boolean;
  children: { start: Start; bound: boolean; tree: DetachedTree }[];
}

const SCHEDULE = {
  setTimeout: (callback: () => void) => void setTimeout(callback, 0),
  setImmediate: (callback: () => void) => void setImmediate(callback),
  queueMicrotask: (callback: () => void) => queueMicrotask(callback),
  nextTick: (callback: () => void) => process.nextTick(callback),
  then: (callback: () => void) => void Promise.resolve().then(callback),
};

const detachedTreeOfDepth = (depth: number): fc.Arbitrary<DetachedTree> =>
  fc.record({
    // Three of the four functions: repeats (recursion, cycles) come often enough to test the refusals.
    fn: fc.integer({ min: 0, max: FUNCTIONS - 2 }),
    async: fc.boolean(),
    thrown: fc.constantFrom<Thrown>("nothing", "nothing", "nothing", "nothing", "error", "undefined", "string", "null"),
    throwsFirst: fc.constantFrom(false, false, false, true),
    children:
      depth === 0
        ? fc.constant([])
        : fc.array(
            fc.record({
              start: fc.constantFrom<Start>("inline", "inline", "inline", "inline", ...(Object.keys(SCHEDULE) as Start[])),
              bound: fc.boolean(),
              tree: detachedTreeOfDepth(depth - 1),
            }),
            // At least one child near the root, so chains get deep enough to reach every limit.
            { minLength: depth > 3 ? 1 : 0, maxLength: 2 },
          ),
  });
const detachedTree = detachedTreeOfDepth(7);

/** One call of a tree: the calls it was started from (finished or not), and whether it still runs. */
interface Invocation {
  readonly frame: Frame;
  readonly ancestors: readonly Invocation[];
  running: boolean;
  entered?: boolean;
}

/** Small enough for random trees to reach every limit. */
const LIMITS = { recursionLimit: 2, maxCycleRepeats: 1, maxChainDepth: 4 };

/** The guard error entering `chain`'s last frame must raise, given the frames truly running before it. */
function refusalOf(chain: readonly Frame[]): string | undefined {
  const key = chain[chain.length - 1].key;
  const sameKey = chain.filter((frame) => frame.key === key).length;
  if (sameKey > LIMITS.recursionLimit) return "RecursionError";
  if (chain.length > LIMITS.maxChainDepth) return "ChainDepthError";
  const repeats = LIMITS.maxCycleRepeats + 1;
  if (sameKey >= repeats && findTailCycle(chain.map((frame) => frame.key), repeats) > 0) return "CycleError";
  return undefined;
}

/**
 * Runs detached trees and compares the guard's view with the truth kept
 * here: a call runs from the moment its function starts until it returns, or
 * until its promise is seen to settle (a reaction registered just before the
 * guard's own, so both see it at the same moment). Every refusal (recursion,
 * chain depth, cycle) must be the one the running calls imply, and no other.
 */
class DetachedRun {
  readonly mismatches: string[] = [];
  readonly lateCallbacks: (() => { chain: number; depths: number[] })[] = [];
  private readonly pending: Promise<unknown>[] = [];

  track(work: unknown): void {
    if (work instanceof Promise) this.pending.push(work);
  }

  async settled(): Promise<void> {
    while (this.pending.length > 0) await Promise.all(this.pending.splice(0));
    await new Promise((resolve) => setImmediate(resolve));
  }

  /** Starts `tree` from `parent`'s context; never throws, and its promise never rejects. */
  execute(tree: DetachedTree, parent: Invocation | undefined): unknown {
    const invocation: Invocation = {
      frame: frames[tree.fn],
      ancestors: parent === undefined ? [] : [...parent.ancestors, parent],
      running: false,
    };
    const end = (): void => {
      invocation.running = false;
    };
    const expected = refusalOf([...invocation.ancestors.filter((call) => call.running).map((call) => call.frame), invocation.frame]);
    try {
      const result = runInFrame(invocation.frame, () => {
        invocation.running = true;
        invocation.entered = true;
        if (!tree.async) {
          try {
            return this.syncBody(tree, invocation);
          } finally {
            end();
          }
        }
        const promise = this.asyncBody(tree, invocation);
        void promise.then(end, end);
        return promise;
      }, LIMITS);
      if (expected !== undefined) this.mismatches.push(`entered ${invocation.frame.name}, expected ${expected}`);
      return result instanceof Promise ? result.catch(() => undefined) : result;
    } catch (error) {
      // An injected throw (the call was entered), or a guard refusal the model must have predicted.
      const outcome = invocation.entered ? "entered" : (error as Error).name;
      if (outcome !== (expected ?? "entered")) this.mismatches.push(`${invocation.frame.name}: ${outcome}, expected ${expected ?? "entered"}`);
      return undefined;
    }
  }

  private syncBody(tree: DetachedTree, self: Invocation): void {
    this.check(self);
    if (tree.throwsFirst) throwValue(tree.thrown);
    for (const child of tree.children) {
      if (child.start === "inline") this.track(this.startChild(child, self));
      else this.schedule(child, self);
      this.check(self);
    }
    this.keepLateCallback();
    throwValue(tree.thrown);
  }

  private async asyncBody(tree: DetachedTree, self: Invocation): Promise<void> {
    this.check(self);
    await new Promise((resolve) => setImmediate(resolve));
    this.check(self);
    if (tree.throwsFirst) throwValue(tree.thrown);
    for (const child of tree.children) {
      if (child.start === "inline") await this.startChild(child, self);
      else this.schedule(child, self);
      this.check(self);
    }
    this.keepLateCallback();
    throwValue(tree.thrown);
  }

  private startChild(child: DetachedTree["children"][number], self: Invocation): unknown {
    return child.bound ? withFrameData({ bound: true }, () => this.execute(child.tree, self)) : this.execute(child.tree, self);
  }

  private schedule(child: DetachedTree["children"][number], self: Invocation): void {
    const start = SCHEDULE[child.start as keyof typeof SCHEDULE];
    this.pending.push(new Promise((resolve) => start(() => resolve(this.startChild(child, self)))));
  }

  private keepLateCallback(): void {
    this.lateCallbacks.push(
      AsyncResource.bind(() => ({ chain: currentChain().length, depths: frames.map((frame) => depthOf(frame.key)) })),
    );
  }

  /** The chain seen from `self` must be exactly its running ancestors and itself, in order. */
  private check(self: Invocation): void {
    const expected = [...self.ancestors, self].filter((call) => call.running).map((call) => call.frame);
    const actual = currentChain();
    const names = (list: readonly Frame[]): string => list.map((frame) => frame.name).join(" → ");
    if (names(actual) !== names(expected)) this.mismatches.push(`chain ${names(actual)}, expected ${names(expected)}`);
    for (const frame of frames) {
      const depth = expected.filter((f) => f.key === frame.key).length;
      if (depthOf(frame.key) !== depth) this.mismatches.push(`depthOf(${frame.name}) ${depthOf(frame.key)}, expected ${depth}`);
    }
  }
}

function throwValue(thrown: Thrown): void {
  switch (thrown) {
    case "error":
      throw new Error("injected");
    case "undefined":
      throw undefined;
    case "string":
      throw "injected string";
    case "null":
      throw null;
  }
}
