import fc from "fast-check";
import { setTimeout as sleep } from "node:timers/promises";
import { currentChain, depthOf, runInFrame } from "./call-chain";

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
});
