import { setTimeout as sleep } from "node:timers/promises";
import { ChainDepthError, CycleError } from "../errors/cycle-error";
import { MAX_AGENTIC_RECURSION_DEPTH, RecursionError } from "../errors/recursion-error";
import { currentChain, currentFrameData, deniedTools, depthOf, runInFrame, withFrameData } from "./call-chain";
import type { Frame } from "./frame";

const frameOf = (name: string): Frame => ({ key: `key:${name}`, name, kind: "agent" });
const A = frameOf("A");
const B = frameOf("B");

describe("call chain depth", () => {
  it("is 1 inside a one-level call and 0 again after a sync return", () => {
    expect(depthOf(A.key)).toBe(0);
    const inside = runInFrame(A, () => depthOf(A.key));
    expect(inside).toBe(1);
    expect(depthOf(A.key)).toBe(0);
    expect(currentChain()).toEqual([]);
  });

  it("is restored after a sync throw", () => {
    expect(() =>
      runInFrame(A, () => {
        expect(depthOf(A.key)).toBe(1);
        throw new Error("sync failure");
      }),
    ).toThrow("sync failure");
    expect(depthOf(A.key)).toBe(0);
    expect(currentChain()).toHaveLength(0);
  });

  it("is 1 across awaits inside an async call and restored after it resolves", async () => {
    const seen = await runInFrame(A, async () => {
      await sleep(1);
      return depthOf(A.key);
    });
    expect(seen).toBe(1);
    expect(depthOf(A.key)).toBe(0);
  });

  it("is restored after an async rejection", async () => {
    await expect(
      runInFrame(A, async () => {
        await sleep(1);
        throw new Error("async failure");
      }),
    ).rejects.toThrow("async failure");
    expect(depthOf(A.key)).toBe(0);
    expect(currentChain()).toHaveLength(0);
  });

  it("is restored after an abort, and an aborted signal refuses entry", async () => {
    const controller = new AbortController();
    const run = runInFrame(A, async () => {
      await sleep(50, undefined, { signal: controller.signal });
    });
    controller.abort(new Error("stop"));
    await expect(run).rejects.toThrow();
    expect(depthOf(A.key)).toBe(0);
    let ran = false;
    expect(() => runInFrame(A, () => (ran = true), { signal: controller.signal })).toThrow("stop");
    expect(ran).toBe(false);
  });

  it("lists the frames outermost first and never mutates the parent's chain", () => {
    runInFrame(A, () => {
      const outer = currentChain();
      runInFrame(B, () => {
        expect(currentChain().map((f) => f.name)).toEqual(["A", "B"]);
      });
      expect(outer.map((f) => f.name)).toEqual(["A"]);
      expect(currentChain()).toBe(outer);
      expect(Object.isFrozen(outer)).toBe(true);
    });
  });
});

describe("recursion ceiling", () => {
  it("stops a mindless self-caller: body runs exactly `limit` times, message names function and limit", () => {
    let bodies = 0;
    const selfCaller = (): number => runInFrame(A, () => (bodies++, selfCaller()));
    let caught: unknown;
    try {
      selfCaller();
    } catch (error) {
      caught = error;
    }
    expect(caught).toBeInstanceOf(RecursionError);
    const error = caught as RecursionError;
    expect(error.name).toBe("RecursionError");
    expect(error.message).toBe(
      "agentic function A exceeded max nesting depth 5 — possible runaway recursion",
    );
    expect(error.functionName).toBe("A");
    expect(error.limit).toBe(MAX_AGENTIC_RECURSION_DEPTH);
    expect(error.depth).toBe(MAX_AGENTIC_RECURSION_DEPTH + 1);
    expect(bodies).toBe(MAX_AGENTIC_RECURSION_DEPTH);
    expect(depthOf(A.key)).toBe(0);
  });

  it("stops an async self-caller the same way", async () => {
    let bodies = 0;
    const selfCaller = (): Promise<never> =>
      runInFrame(A, async () => {
        bodies++;
        await sleep(0);
        return selfCaller();
      });
    await expect(selfCaller()).rejects.toThrow(RecursionError);
    expect(bodies).toBe(5);
  });

  it("takes the limit per call from options.recursionLimit", () => {
    let bodies = 0;
    const selfCaller = (): number => runInFrame(A, () => (bodies++, selfCaller()), { recursionLimit: 2 });
    expect(selfCaller).toThrow("exceeded max nesting depth 2");
    expect(bodies).toBe(2);
  });

  it("rejects a limit that is not a positive integer with a TypeError naming it", () => {
    expect(() => runInFrame(A, () => 1, { recursionLimit: 0 })).toThrow(TypeError);
    expect(() => runInFrame(A, () => 1, { maxChainDepth: 2.5 })).toThrow("Invalid maxChainDepth: 2.5");
  });

  it("counts distinct functions independently: A's nesting does not use B's quota", () => {
    let bReached = 0;
    const nestA = (level: number): void =>
      runInFrame(A, () => {
        if (level < 5) return nestA(level + 1);
        // A is at the ceiling; B still gets its full quota of 5.
        const nestB = (depth: number): void =>
          runInFrame(B, () => {
            bReached = depth;
            if (depth < 5) nestB(depth + 1);
          });
        nestB(1);
      });
    nestA(1);
    expect(bReached).toBe(5);
  });

  it("never puts the running function's own name in the deny list", () => {
    const tool = frameOf("wiki_agent");
    const seen: string[][] = [];
    const dive = (level: number): void =>
      runInFrame(
        tool,
        () => {
          seen.push([...deniedTools()]);
          if (level < 5) dive(level + 1);
        },
        { deny: ["shell"] },
      );
    runInFrame(frameOf("outer"), () => dive(1), { deny: ["delete_everything"] });
    expect(seen).toHaveLength(5);
    for (const denied of seen) {
      expect(denied).not.toContain("wiki_agent");
      expect(denied).toContain("delete_everything");
    }
    expect(deniedTools()).toEqual([]);
  });
});

describe("concurrency", () => {
  it("Promise.all of many concurrent nested calls: each sees only its own chain", async () => {
    const branches = Array.from({ length: 50 }, (_, i) => i);
    const chains = await Promise.all(
      branches.map((i) =>
        runInFrame(frameOf(`root${i}`), async () => {
          await sleep(Math.random() * 5);
          return runInFrame(frameOf(`leaf${i}`), async () => {
            await sleep(Math.random() * 5);
            return currentChain().map((f) => f.name);
          });
        }),
      ),
    );
    chains.forEach((chain, i) => expect(chain).toEqual([`root${i}`, `leaf${i}`]));
    expect(currentChain()).toEqual([]);
  });
});

describe("cycle detection", () => {
  it("stops A→B→A→B… with CycleError long before 5×2 frames", () => {
    let entries = 0;
    const callA = (): void => runInFrame(A, () => (entries++, callB()));
    const callB = (): void => runInFrame(B, () => (entries++, callA()));
    let caught: unknown;
    try {
      callA();
    } catch (error) {
      caught = error;
    }
    expect(caught).toBeInstanceOf(CycleError);
    const error = caught as CycleError;
    expect(error.cycle).toEqual(["A", "B"]);
    expect(error.repeats).toBe(3);
    expect(error.message).toContain("A → B");
    expect(entries).toBe(5);
    expect(entries).toBeLessThan(10);
  });

  it("allows a legitimate A→B→A (one repeat) and A→B→A→B (two repeats)", () => {
    const path = runInFrame(A, () =>
      runInFrame(B, () => runInFrame(A, () => runInFrame(B, () => currentChain().map((f) => f.name)))),
    );
    expect(path).toEqual(["A", "B", "A", "B"]);
  });

  it("detects longer cycles (A→B→C repeated) and honours maxCycleRepeats", () => {
    const C = frameOf("C");
    const order = [A, B, C];
    let entries = 0;
    const step = (i: number): void =>
      runInFrame(order[i % 3], () => (entries++, step(i + 1)), { maxCycleRepeats: 1 });
    expect(() => step(0)).toThrow(CycleError);
    expect(entries).toBe(5);
  });

  it("leaves pure self-recursion to the recursion ceiling", () => {
    const selfCaller = (): void => runInFrame(A, selfCaller);
    expect(selfCaller).toThrow(RecursionError);
  });

  it("bounds any chain at maxChainDepth with ChainDepthError", () => {
    let entries = 0;
    const dive = (i: number): void => runInFrame(frameOf(`f${i}`), () => (entries++, dive(i + 1)));
    let caught: unknown;
    try {
      dive(0);
    } catch (error) {
      caught = error;
    }
    expect(caught).toBeInstanceOf(ChainDepthError);
    expect((caught as ChainDepthError).limit).toBe(25);
    expect(entries).toBe(25);
    entries = 0;
    const shallow = (i: number): void =>
      runInFrame(frameOf(`g${i}`), () => (entries++, shallow(i + 1)), { maxChainDepth: 3 });
    expect(() => shallow(0)).toThrow("call chain exceeded max depth 3");
    expect(entries).toBe(3);
  });
});

describe("frame data", () => {
  it("is inherited by nested frames that set none and overridden by those that do", () => {
    const result = runInFrame(
      A,
      () => [currentFrameData(), runInFrame(B, currentFrameData), runInFrame(B, currentFrameData, { data: "inner" })],
      { data: "outer" },
    );
    expect(result).toEqual(["outer", "outer", "inner"]);
    expect(currentFrameData()).toBeUndefined();
  });

  it("passes extra arguments through to fn", () => {
    expect(runInFrame(A, (x: number, y: number) => x + y, undefined, 2, 3)).toBe(5);
  });
});

describe("withFrameData", () => {
  it("changes the frame data without adding a frame or touching depths", () => {
    runInFrame(
      A,
      () => {
        withFrameData("bound", () => {
          expect(currentFrameData()).toBe("bound");
          expect(currentChain().map((f) => f.name)).toEqual(["A"]);
          expect(depthOf(A.key)).toBe(1);
          // nested frames inherit the bound data and count as usual
          runInFrame(A, () => {
            expect(currentFrameData()).toBe("bound");
            expect(currentChain().map((f) => f.name)).toEqual(["A", "A"]);
          });
        });
        expect(currentFrameData()).toBe("outer");
      },
      { data: "outer" },
    );
    expect(withFrameData("top", () => currentChain())).toEqual([]);
  });
});
