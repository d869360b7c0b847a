import { AsyncLocalStorage } from "node:async_hooks";
import { ChainDepthError, CycleError } from "../errors/cycle-error";
import { MAX_AGENTIC_RECURSION_DEPTH, RecursionError } from "../errors/recursion-error";
import { findTailCycle } from "./cycle";
import type { Frame } from "./frame";

/**
 * Limits checked when entering a frame. Every field is optional; omitted
 * fields take the defaults.
 */
export interface ChainLimits {
  /** Active frames of one function allowed on the chain. @default 5 ({@link MAX_AGENTIC_RECURSION_DEPTH}) */
  recursionLimit?: number;
  /** Times the chain's tail may repeat a sequence of two or more functions. @default 2 */
  maxCycleRepeats?: number;
  /** Frames allowed on one chain, whatever they are. @default 25 */
  maxChainDepth?: number;
}

/** Options for {@link runInFrame}. */
export interface RunInFrameOptions extends ChainLimits {
  /** Refuse to enter (throwing the signal's reason) when already aborted. */
  signal?: AbortSignal;
  /**
   * Tool names this call withholds from everything it runs. Inherited by
   * nested calls. The guard itself never adds a function's own name: the model
   * keeps seeing itself among its tools, which is what gives the situational
   * prefix its subject.
   */
  deny?: readonly string[];
  /**
   * An opaque value carried with this frame and inherited by nested frames
   * that set none (core keeps its call scope here, so one AsyncLocalStorage
   * serves both). Read it with {@link currentFrameData}.
   */
  data?: unknown;
}

const CYCLE_REPEATS = 2;
const CHAIN_DEPTH = 25;
const RECURSION_LIMIT = MAX_AGENTIC_RECURSION_DEPTH;
/** Default of {@link ChainLimits.maxCycleRepeats}. @default 2 */
export const DEFAULT_MAX_CYCLE_REPEATS = CYCLE_REPEATS;
/** Default of {@link ChainLimits.maxChainDepth}. @default 25 */
export const DEFAULT_MAX_CHAIN_DEPTH = CHAIN_DEPTH;

/**
 * A link of the chain: entering a frame allocates one and never touches the
 * parent's fields that other calls read (`key`, `frame`, `deny`, `data`).
 *
 * A frame stays active while its function runs: until it returns, or, when
 * it returns a native Promise, until that promise settles. A finished link
 * may still be the store of continuations it scheduled (a timer, a detached
 * `.then`); they see it, but it no longer counts. A new frame link points to
 * the nearest link still active, and every walk that enters a frame unlinks
 * the finished links it passes, so the chain of a poller that re-arms itself
 * forever never grows.
 */
interface ChainNode {
  /** Undefined for data-only links made by {@link withFrameData}. */
  readonly key: string | undefined;
  readonly frame: Frame | undefined;
  /** The nearest active frame link when this one was made; finished links are unlinked as walks pass them. */
  parent: ChainNode | undefined;
  /** Active frames on the chain when this link was made, itself included (data-only links: its parent's). */
  readonly size: number;
  /** True while the frame's function runs; always false for data-only links. */
  active: boolean;
  readonly deny: readonly string[] | undefined;
  readonly data: unknown;
  /** Cache of {@link currentChain}: valid while its length equals the count of active links (they only ever finish). */
  frames: readonly Frame[] | undefined;
}

const storage = new AsyncLocalStorage<ChainNode>();
const EMPTY: readonly Frame[] = Object.freeze([]);

/**
 * The active call chain, outermost frame first: the frames whose functions
 * are still running. Materialised lazily and cached, so repeated reads in
 * one frame return the same frozen array until a frame on it finishes.
 */
export function currentChain(): readonly Frame[] {
  const node = storage.getStore();
  if (node === undefined) return EMPTY;
  const count = activeFrames(node);
  if (count === 0) return EMPTY;
  const cached = node.frames;
  // Links only ever finish, never revive: the same count means the same frames.
  if (cached !== undefined && cached.length === count) return cached;
  return (node.frames = Object.freeze(materialise(node, count)));
}

/**
 * How many frames of the function identified by `key` are active (still
 * running) on the current chain. A callback that a finished call scheduled
 * (`setTimeout`, `setImmediate`, `queueMicrotask`, `process.nextTick`, a
 * detached `.then`) does not count that call.
 */
export function depthOf(key: string): number {
  let count = 0;
  for (let n = storage.getStore(); n !== undefined; n = n.parent) if (n.key === key && n.active) count++;
  return count;
}

/**
 * Tool names withheld by the `deny` options of the frames this code runs in.
 * A callback scheduled by a call keeps that call's list, also after the call
 * finished.
 */
export function deniedTools(): readonly string[] {
  return storage.getStore()?.deny ?? EMPTY_NAMES;
}
const EMPTY_NAMES: readonly string[] = Object.freeze([]);

/**
 * The `data` of the innermost frame that set one, or `undefined`. Like
 * {@link deniedTools}, a callback scheduled by a call keeps that call's data.
 */
export function currentFrameData(): unknown {
  return storage.getStore()?.data;
}

/**
 * Runs `fn` with `frame` pushed on the call chain, after checking the
 * recursion ceiling, the chain depth and cycle detection. Works for sync and
 * async functions; extra arguments are passed to `fn` (saving a closure on
 * hot paths).
 *
 * The frame is active while `fn` runs: until it returns or throws, or, when
 * it returns a native `Promise`, until that promise settles. Then the frame
 * no longer counts, also for callbacks it scheduled and left running
 * (`setTimeout`, `setImmediate`, `queueMicrotask`, `process.nextTick`, a
 * detached `.then`), so a method that re-arms itself is never mistaken for
 * recursion. For a native `Promise` the result is a promise derived from
 * `fn`'s that settles the same way (an unhandled rejection of it is reported
 * as `fn`'s would be); any other value, other thenables included, is
 * returned as it is and the frame ends when `fn` returns.
 *
 * Nothing needs undoing after a throw, a rejection or an abort: the chain is
 * immutable and scoped by AsyncLocalStorage, so the caller's chain is intact.
 *
 * @throws {RecursionError} when `recursionLimit` frames of `frame.key` are already active
 * @throws {ChainDepthError} when the chain already holds `maxChainDepth` active frames
 * @throws {CycleError} when entering would repeat a call cycle more than `maxCycleRepeats` times
 *
 * @example
 * ```ts
 * const frame = { key: "wiki", name: "wiki_agent", kind: "agent" } as const;
 * await runInFrame(frame, async () => search("topic"));
 * ```
 */
export function runInFrame<A extends unknown[], R>(
  frame: Frame,
  fn: (...args: A) => R,
  options?: RunInFrameOptions,
  ...args: A
): R {
  const current = storage.getStore();
  let recursionLimit = RECURSION_LIMIT;
  let maxCycleRepeats = CYCLE_REPEATS;
  let maxChainDepth = CHAIN_DEPTH;
  let deny = current?.deny;
  let data = current?.data;
  if (options !== undefined) {
    if (options.recursionLimit !== undefined) recursionLimit = checkLimit("recursionLimit", options.recursionLimit);
    if (options.maxCycleRepeats !== undefined) maxCycleRepeats = checkLimit("maxCycleRepeats", options.maxCycleRepeats);
    if (options.maxChainDepth !== undefined) maxChainDepth = checkLimit("maxChainDepth", options.maxChainDepth);
    if (options.signal?.aborted) throw options.signal.reason;
    if (options.deny !== undefined && options.deny.length > 0) deny = deny ? [...deny, ...options.deny] : options.deny;
    if (options.data !== undefined) data = options.data;
  }

  // The new link's parent is the nearest active link; one walk counts this
  // function's active frames and unlinks the finished links it passes, so the
  // parent's chain holds active links only.
  const key = frame.key;
  let parent = current;
  if (parent !== undefined && !parent.active) {
    let n = parent.parent;
    while (n !== undefined && !n.active) n = n.parent;
    parent.parent = n;
    parent = n;
  }
  let sameKey = 1;
  if (parent !== undefined) {
    if (parent.key === key) sameKey = 2;
    let previous = parent;
    let n = parent.parent;
    while (n !== undefined) {
      if (!n.active) {
        // Rare: a run of finished links (a detached call outlived its callers). Unlink it for good.
        do {
          n = n.parent;
        } while (n !== undefined && !n.active);
        previous.parent = n;
        if (n === undefined) break;
      }
      if (n.key === key) sameKey++;
      previous = n;
      n = n.parent;
    }
  }
  if (sameKey > recursionLimit) throw new RecursionError(frame.name, sameKey, recursionLimit);
  // `size` of a link counts the active frames when it was made: an upper bound later, exact after a recount.
  let size = parent === undefined ? 1 : parent.size + 1;
  if (size > maxChainDepth && parent !== undefined) size = activeFrames(parent) + 1;
  if (size > maxChainDepth) throw new ChainDepthError(frame.name, size, maxChainDepth);
  const repeats = maxCycleRepeats + 1;
  if (sameKey >= repeats && parent !== undefined) checkCycle(parent, frame, repeats);

  const node: ChainNode = { key, frame, parent, size, active: true, deny, data, frames: undefined };
  let result: R;
  try {
    result = args.length === 0 ? storage.run(node, fn as () => R) : storage.run(node, fn, ...args);
  } catch (error) {
    node.active = false;
    throw error;
  }
  if (result instanceof Promise) return settleThrough(node, result) as R;
  node.active = false;
  return result;
}

/**
 * Ends `node`'s frame when `promise` settles. The handlers go on a derived
 * promise that settles the same way, so a rejection nobody handles is still
 * reported (on the derived promise, which is the one the caller holds).
 */
function settleThrough<T>(node: ChainNode, promise: Promise<T>): Promise<T> {
  return promise.then(
    (value) => {
      node.active = false;
      return value;
    },
    (error: unknown) => {
      node.active = false;
      throw error;
    },
  );
}

/** Rare path: `frame`'s function already has `repeats - 1` active frames under `parent`. */
function checkCycle(parent: ChainNode, frame: Frame, repeats: number): void {
  const frames = [...materialise(parent, activeFrames(parent)), frame];
  const period = findTailCycle(
    frames.map((f) => f.key),
    repeats,
  );
  if (period > 0) {
    throw new CycleError(
      frames.slice(frames.length - period).map((f) => f.name),
      repeats,
    );
  }
}

/** How many active frames are reachable from `node`. */
function activeFrames(node: ChainNode): number {
  let count = 0;
  for (let n: ChainNode | undefined = node; n !== undefined; n = n.parent) if (n.active) count++;
  return count;
}

/** The `count` active frames reachable from `node`, outermost first. */
function materialise(node: ChainNode, count: number): Frame[] {
  const frames = new Array<Frame>(count);
  let index = count;
  for (let n: ChainNode | undefined = node; n !== undefined; n = n.parent) {
    if (n.active) frames[--index] = n.frame as Frame;
  }
  return frames;
}

/**
 * Runs `fn` with `data` as the current frame data but no new frame: the
 * chain, depths and limits are unchanged. Core uses it to bind a Context to
 * a callback (`context.bind(fn)`) without the binding showing as a call.
 */
export function withFrameData<A extends unknown[], R>(data: unknown, fn: (...args: A) => R, ...args: A): R {
  const current = storage.getStore();
  const node: ChainNode = {
    key: undefined,
    frame: undefined,
    // A data-only link never counts, so links made under it skip it: chains hold frames only.
    parent: current === undefined || current.frame !== undefined ? current : current.parent,
    size: current === undefined ? 0 : current.size,
    active: false,
    deny: current?.deny,
    data,
    frames: undefined,
  };
  return storage.run(node, fn, ...args);
}

function checkLimit(name: keyof ChainLimits, value: number): number {
  if (!Number.isInteger(value) || value <= 0) {
    throw new TypeError(`Invalid ${name}: ${String(value)} — expected a positive integer`);
  }
  return value;
}
