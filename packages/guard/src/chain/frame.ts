/**
 * What a frame stands for. Reach counts logic depth over `"agent"` frames
 * only; helpers, tools and plain functions are still guarded by the
 * recursion ceiling, cycle detection and chain depth.
 */
export type FrameKind = "agent" | "helper" | "tool" | "function";

/**
 * One entry of the call chain. Frames are immutable and are usually created
 * once per function (not per call), then passed to `runInFrame` each time.
 *
 * @example
 * ```ts
 * const frame: Frame = { key: "Wiki#search", name: "Wiki.search", kind: "agent" };
 * ```
 */
export interface Frame {
  /** Identity of the function: what the recursion ceiling counts. Two functions must never share a key. */
  readonly key: string;
  /** The name people read in errors, prefixes and logs (`Researcher.research`). */
  readonly name: string;
  /** What kind of call this is. @default "function" */
  readonly kind?: FrameKind;
  /** Trust zone the call runs in, checked by reach policies. */
  readonly zone?: string;
}
