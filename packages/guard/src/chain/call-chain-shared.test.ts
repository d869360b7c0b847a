/**
 * The call chain is one per process: every evaluation of the module (a dev
 * server's hot reload, a test runner's module registry per file, a second
 * installed copy of @rein/guard) uses the same AsyncLocalStorage.
 */
import { AsyncLocalStorage } from "node:async_hooks";
import { RecursionError } from "../errors/recursion-error";

type ChainModule = typeof import("./call-chain");

/** The module evaluated afresh, as a hot reload or another copy of the package evaluates it. */
function evaluateAgain(): ChainModule {
  let module: ChainModule | undefined;
  jest.isolateModules(() => {
    module = require("./call-chain") as ChainModule;
  });
  return module!;
}

describe("one call chain per process", () => {
  it("two evaluations of the module share the chain: a frame entered through one is seen, and counted toward the recursion ceiling, by the other", async () => {
    const first = evaluateAgain();
    const second = evaluateAgain();
    expect(second).not.toBe(first);
    const frame = { key: "Wiki.research", name: "research", kind: "agent" } as const;
    const seen = await first.runInFrame(frame, async () => {
      await Promise.resolve();
      return { chain: second.currentChain().map((entry) => entry.key), depth: second.depthOf(frame.key) };
    });
    expect(seen).toEqual({ chain: ["Wiki.research"], depth: 1 });
    // Alternating copies, as calls through two copies of core would: the ceiling (5) holds across them.
    const copies = [first, second];
    const recurse = (level: number): Promise<number> => copies[level % 2]!.runInFrame(frame, async () => recurse(level + 1));
    const failure = await recurse(0).catch((error: unknown) => error);
    // Thrown by one copy's RecursionError class: recognised by its marker, as errors of two copies are.
    expect(RecursionError.isInstance(failure)).toBe(true);
    // The sixth nested call is refused: five frames were active, whichever copy entered each.
    expect(failure).toMatchObject({ depth: 6, limit: 5 });
  });

  it("evaluations do not add storages: five evaluations, each entering a frame, enter one AsyncLocalStorage", async () => {
    const frame = { key: "Wiki.research", name: "research", kind: "agent" } as const;
    const storages = new Set<unknown>();
    const original = AsyncLocalStorage.prototype.run;
    const spy = jest.spyOn(AsyncLocalStorage.prototype, "run").mockImplementation(function (this: AsyncLocalStorage<unknown>, ...args: Parameters<typeof original>) {
      storages.add(this);
      return original.apply(this, args);
    });
    try {
      for (let evaluation = 0; evaluation < 5; evaluation++) await evaluateAgain().runInFrame(frame, async () => undefined);
    } finally {
      spy.mockRestore();
    }
    expect(storages.size).toBe(1);
  });
});
