import { execFile } from "node:child_process";
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { setFlagsFromString } from "node:v8";
import { runInNewContext } from "node:vm";
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

/** Ways a method re-arms itself and returns at once: the callback runs in the finished call's async context. */
const REARM: Record<string, (callback: () => void) => void> = {
  setTimeout: (callback) => void setTimeout(callback, 0),
  setImmediate: (callback) => void setImmediate(callback),
  queueMicrotask: (callback) => queueMicrotask(callback),
  "process.nextTick": (callback) => process.nextTick(callback),
  "a detached .then": (callback) => void Promise.resolve().then(callback),
};
const POLLS = 12;

/**
 * Runs `POLLS` polls of frame P, each scheduling the next with `rearm` and
 * returning at once. A `"sync"` poll is a plain method; an `"async"` one
 * returns a promise that settles at once; `"async after I/O"` awaits a
 * macrotask first, as a poller waiting on I/O does. Resolves with the depth
 * of P each poll saw, rejects with a guard error.
 */
function poller(rearm: (callback: () => void) => void, kind: "sync" | "async" | "async after I/O"): Promise<number[]> {
  const P = frameOf("Poller.poll");
  const depths: number[] = [];
  return new Promise((resolve, reject) => {
    const body = (): void => {
      depths.push(depthOf(P.key));
      if (depths.length === POLLS) resolve(depths);
      else rearm(poll);
    };
    const poll = (): void => {
      try {
        if (kind === "sync") runInFrame(P, body);
        else if (kind === "async") runInFrame(P, async () => body()).catch(reject);
        else
          runInFrame(P, async () => {
            await new Promise((io) => setImmediate(io));
            body();
          }).catch(reject);
      } catch (error) {
        reject(error);
      }
    };
    poll();
  });
}

describe("active frames: a finished call no longer counts", () => {
  for (const [mechanism, rearm] of Object.entries(REARM)) {
    it(`lets a sync method re-arm itself through ${mechanism} ${POLLS} times: depth stays 1, no RecursionError`, async () => {
      expect(await poller(rearm, "sync")).toEqual(Array(POLLS).fill(1));
    });

    it(`lets an async method re-arm itself through ${mechanism} after awaiting I/O ${POLLS} times: no RecursionError`, async () => {
      const depths = await poller(rearm, "async after I/O");
      // A microtask queued before the poll's promise settled may still see that poll: one, never more.
      for (const depth of depths) expect(depth).toBeLessThanOrEqual(mechanism === "queueMicrotask" ? 2 : 1);
      expect(depths).toHaveLength(POLLS);
    });

    // A chain of process.nextTick callbacks runs before any promise reaction, so an async poll that
    // never awaits cannot be seen to settle until the chain stops (docs/guard/recursion.md, Decisions).
    if (mechanism === "process.nextTick") continue;
    it(`lets an async method that returns at once re-arm itself through ${mechanism} ${POLLS} times: no RecursionError`, async () => {
      const depths = await poller(rearm, "async");
      expect(depths).toHaveLength(POLLS);
      for (const depth of depths) expect(depth).toBeLessThanOrEqual(mechanism.includes("set") ? 1 : 2);
    });
  }

  it("still stops a true recursion at depth 6 (sync, and async through awaited calls)", async () => {
    let bodies = 0;
    const selfCaller = (): number => runInFrame(A, () => (bodies++, selfCaller()));
    expect(selfCaller).toThrow(RecursionError);
    expect(bodies).toBe(5);
    bodies = 0;
    const asyncSelfCaller = (): Promise<void> =>
      runInFrame(A, async () => {
        bodies++;
        await new Promise((resolve) => setImmediate(resolve));
        await asyncSelfCaller();
      });
    const error = await asyncSelfCaller().catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(RecursionError);
    expect((error as RecursionError).depth).toBe(6);
    expect(bodies).toBe(5);
  });

  it("counts a call that scheduled a callback while it is still running, and not after it settled", async () => {
    const seen: number[] = [];
    let release!: () => void;
    const held = new Promise<void>((resolve) => (release = resolve));
    const done = runInFrame(A, async () => {
      setImmediate(() => seen.push(depthOf(A.key)));
      await held;
      setImmediate(() => seen.push(depthOf(A.key)));
    });
    await new Promise((resolve) => setImmediate(resolve));
    release();
    await done;
    await new Promise((resolve) => setImmediate(resolve));
    expect(seen).toEqual([1, 0]);
  });

  it("keeps Promise.all branches isolated while finished siblings drop out", async () => {
    const chains = await Promise.all(
      Array.from({ length: 20 }, (_, i) =>
        runInFrame(frameOf(`branch${i}`), async () => {
          await sleep(i % 3);
          // The leaf is scheduled inside a call that returns at once: by the time it runs, that call is over.
          return new Promise<string[]>((resolve) =>
            runInFrame(frameOf(`finished${i}`), () =>
              setImmediate(() => runInFrame(frameOf(`leaf${i}`), () => resolve(currentChain().map((f) => f.name)))),
            ),
          );
        }),
      ),
    );
    chains.forEach((chain, i) => expect(chain).toEqual([`branch${i}`, `leaf${i}`]));
  });

  it("never returns a cached currentChain() that still holds a finished frame", async () => {
    let release!: () => void;
    const held = new Promise<void>((resolve) => (release = resolve));
    let inner!: Promise<(readonly Frame[])[]>;
    const outer = runInFrame(A, () => {
      inner = runInFrame(B, async () => {
        const before = currentChain();
        expect(currentChain()).toBe(before); // cached while nothing finished
        await held;
        return [before, currentChain()];
      });
    });
    expect(outer).toBeUndefined(); // A returned at once, leaving B running
    release();
    const [before, after] = await inner;
    expect(before.map((f) => f.name)).toEqual(["A", "B"]);
    expect(after.map((f) => f.name)).toEqual(["B"]);
  });

  it("lets cycle detection and maxChainDepth see active frames only", async () => {
    const C = frameOf("C");
    // A → B → A → B, each returning at once and scheduling the next: never a cycle.
    const order = [A, B, A, B, A, B, A, B];
    const names = await new Promise<string[][]>((resolve, reject) => {
      const chains: string[][] = [];
      const step = (i: number): void => {
        try {
          runInFrame(order[i], () => {
            chains.push(currentChain().map((f) => f.name));
            if (i + 1 < order.length) setImmediate(() => step(i + 1));
            else resolve(chains);
          });
        } catch (error) {
          reject(error);
        }
      };
      step(0);
    });
    expect(names).toEqual(order.map((f) => [f.name]));
    // 30 re-armed calls of distinct functions under maxChainDepth 2: fine.
    const depths = await new Promise<number[]>((resolve, reject) => {
      const seen: number[] = [];
      const step = (i: number): void => {
        try {
          runInFrame(frameOf(`chain${i}`), () => {
            seen.push(currentChain().length);
            if (i < 30) setImmediate(() => runInFrame(C, () => step(i + 1), { maxChainDepth: 2 }));
            else resolve(seen);
          }, { maxChainDepth: 2 });
        } catch (error) {
          reject(error);
        }
      };
      step(0);
    });
    expect(depths[0]).toBe(1);
    expect(depths.slice(1).every((depth) => depth === 2)).toBe(true);
  });

  it("counts maxChainDepth exactly once outer calls finished under a detached inner call", async () => {
    let release!: () => void;
    const held = new Promise<void>((resolve) => (release = resolve));
    let inner!: Promise<string[]>;
    // A → B → C, where A and B return at once and C keeps running.
    runInFrame(A, () =>
      runInFrame(B, () => {
        inner = runInFrame(frameOf("C"), async () => {
          await held;
          // Only C is active: two more levels fit under maxChainDepth 3.
          return runInFrame(A, () => runInFrame(B, () => currentChain().map((f) => f.name), { maxChainDepth: 3 }), { maxChainDepth: 3 });
        });
      }),
    );
    release();
    expect(await inner).toEqual(["C", "A", "B"]);
  });

  it("returns a derived promise that settles like fn's, and leaves other thenables untouched", async () => {
    const value = { answer: 42 };
    await expect(runInFrame(A, async () => value)).resolves.toBe(value);
    const failure = "not an Error";
    await expect(runInFrame(A, () => Promise.reject(failure))).rejects.toBe(failure);
    await expect(runInFrame(A, () => Promise.reject(undefined))).rejects.toBeUndefined();
    let thenCalls = 0;
    const thenable = { then: () => void thenCalls++ };
    expect(runInFrame(A, () => thenable)).toBe(thenable);
    expect(thenCalls).toBe(0);
    expect(depthOf(A.key)).toBe(0);
  });

  it("reports a rejection nobody handles (process exits 1), and none when the caller handles it", async () => {
    const run = async (body: string): Promise<{ code: number; stderr: string }> => {
      const script = join(mkdtempSync(join(tmpdir(), "rein-chain-")), "script.ts");
      writeFileSync(script, `import { runInFrame } from ${JSON.stringify(join(__dirname, "call-chain"))};\n${body}\n`);
      return new Promise((resolve) => {
        execFile(process.execPath, ["--import", "tsx", script], { cwd: __dirname }, (error, _stdout, stderr) =>
          resolve({ code: error === null ? 0 : Number(error.code), stderr }),
        );
      });
    };
    const frame = `{ key: "a", name: "a" }`;
    const unhandled = await run(`void runInFrame(${frame}, async () => { throw new Error("nobody listens"); });`);
    expect(unhandled.code).toBe(1);
    expect(unhandled.stderr).toContain("nobody listens");
    const handled = await run(`runInFrame(${frame}, async () => { throw new Error("handled"); }).catch(() => undefined);`);
    expect(handled).toEqual({ code: 0, stderr: "" });
  });

  it("does not keep finished calls of an overlapping re-armed poller reachable while it keeps running", async () => {
    setFlagsFromString("--expose_gc");
    const gc = runInNewContext("gc") as () => void;
    const P = frameOf("Overlapping.poll");
    const firstData = new WeakRef({ poll: 0 });
    const polls = 200;
    let release!: () => void;
    const stillPolling = new Promise<void>((resolve) => (release = resolve));
    const maxDepth = await new Promise<number>((resolve, reject) => {
      let deepest = 0;
      // Each poll schedules the next and stays active until the next one started: always one overlap.
      const poll = (i: number): void => {
        runInFrame(
          P,
          async () => {
            deepest = Math.max(deepest, depthOf(P.key));
            if (i === polls) {
              resolve(deepest);
              return stillPolling; // the poller is still running while the test looks
            }
            await new Promise<void>((started) =>
              setImmediate(() => {
                try {
                  poll(i + 1);
                } catch (error) {
                  reject(error);
                }
                started();
              }),
            );
          },
          { data: i === 0 ? firstData.deref() : { poll: i } },
        ).catch(reject);
      };
      poll(0);
    });
    expect(maxDepth).toBe(2);
    await sleep(5);
    gc();
    // The running poll's chain no longer links back to the first poll's frame.
    expect(firstData.deref()).toBeUndefined();
    release();
  });
});
