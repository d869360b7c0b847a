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

/** A link of the immutable chain: entering a frame allocates one and never touches the parent. */
interface ChainNode {
  /** Undefined for data-only links made by {@link withFrameData}. */
  readonly key: string | undefined;
  readonly frame: Frame | undefined;
  readonly parent: ChainNode | undefined;
  readonly size: number;
  readonly deny: readonly string[] | undefined;
  readonly data: unknown;
  frames: readonly Frame[] | undefined;
}

const storage = new AsyncLocalStorage<ChainNode>();
const EMPTY: readonly Frame[] = Object.freeze([]);

/**
 * The active call chain, outermost frame first. Materialised lazily from the
 * linked chain and cached, so repeated reads in one frame are free.
 */
export function currentChain(): readonly Frame[] {
  const node = storage.getStore();
  if (node === undefined || node.size === 0) return EMPTY;
  return (node.frames ??= Object.freeze(materialise(node)));
}

/** How many frames of the function identified by `key` are active on the current chain. */
export function depthOf(key: string): number {
  let count = 0;
  for (let n = storage.getStore(); n; n = n.parent) if (n.key === key) count++;
  return count;
}

/** Tool names withheld by the `deny` options of the active frames. */
export function deniedTools(): readonly string[] {
  return storage.getStore()?.deny ?? EMPTY_NAMES;
}
const EMPTY_NAMES: readonly string[] = Object.freeze([]);

/** The `data` of the innermost frame that set one, or `undefined`. */
export function currentFrameData(): unknown {
  return storage.getStore()?.data;
}

/**
 * Runs `fn` with `frame` pushed on the call chain, after checking the
 * recursion ceiling, the chain depth and cycle detection. Works for sync and
 * async functions and returns what `fn` returns; extra arguments are passed
 * to `fn` (saving a closure on hot paths).
 *
 * Nothing needs undoing after a throw, a rejection or an abort: the chain is
 * immutable and scoped by AsyncLocalStorage, so the caller's chain is intact.
 *
 * @throws {RecursionError} when `recursionLimit` frames of `frame.key` are already active
 * @throws {ChainDepthError} when the chain already holds `maxChainDepth` frames
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
  const parent = storage.getStore();
  let recursionLimit = RECURSION_LIMIT;
  let maxCycleRepeats = CYCLE_REPEATS;
  let maxChainDepth = CHAIN_DEPTH;
  let deny = parent?.deny;
  let data = parent?.data;
  if (options !== undefined) {
    if (options.recursionLimit !== undefined) recursionLimit = checkLimit("recursionLimit", options.recursionLimit);
    if (options.maxCycleRepeats !== undefined) maxCycleRepeats = checkLimit("maxCycleRepeats", options.maxCycleRepeats);
    if (options.maxChainDepth !== undefined) maxChainDepth = checkLimit("maxChainDepth", options.maxChainDepth);
    if (options.signal?.aborted) throw options.signal.reason;
    if (options.deny !== undefined && options.deny.length > 0) deny = deny ? [...deny, ...options.deny] : options.deny;
    if (options.data !== undefined) data = options.data;
  }

  const key = frame.key;
  let sameKey = 1;
  for (let n = parent; n; n = n.parent) if (n.key === key) sameKey++;
  if (sameKey > recursionLimit) throw new RecursionError(frame.name, sameKey, recursionLimit);

  const size = parent === undefined ? 1 : parent.size + 1;
  if (size > maxChainDepth) throw new ChainDepthError(frame.name, size, maxChainDepth);

  const repeats = maxCycleRepeats + 1;
  if (sameKey >= repeats && parent !== undefined) checkCycle(parent, frame, repeats);

  const node: ChainNode = { key, frame, parent, size, deny, data, frames: undefined };
  return args.length === 0 ? storage.run(node, fn as () => R) : storage.run(node, fn, ...args);
}

function checkCycle(parent: ChainNode, frame: Frame, repeats: number): void {
  const frames = [...materialise(parent), frame];
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

function materialise(node: ChainNode): readonly Frame[] {
  const frames = new Array<Frame>(node.size);
  let index = node.size;
  for (let n: ChainNode | undefined = node; n; n = n.parent) if (n.frame !== undefined) frames[--index] = n.frame;
  return frames;
}

/**
 * Runs `fn` with `data` as the current frame data but no new frame: the
 * chain, depths and limits are unchanged. Core uses it to bind a Context to
 * a callback (`context.bind(fn)`) without the binding showing as a call.
 */
export function withFrameData<A extends unknown[], R>(data: unknown, fn: (...args: A) => R, ...args: A): R {
  const parent = storage.getStore();
  const node: ChainNode = {
    key: undefined,
    frame: undefined,
    parent,
    size: parent === undefined ? 0 : parent.size,
    deny: parent?.deny,
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
