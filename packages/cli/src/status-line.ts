/** A used / limit pair; a `null` limit is no limit (JSON has no Infinity). */
export interface ReachFigure {
  readonly used: number;
  readonly limit: number | null;
}

/** The reach figures the child publishes: `currentReach()` of the running call. */
export interface ReachFigures {
  readonly depth: ReachFigure;
  readonly memoryMb: ReachFigure;
  readonly zone: string;
  readonly tokens: ReachFigure;
  readonly costUsd: ReachFigure;
  readonly elapsedMs: number;
}

import type { GuardFigures } from "./guard-figures";

/** One status message of a run's child process. */
export interface StatusMessage {
  /** Increases with every publication: the parent sees the child is alive while it changes. */
  readonly seq: number;
  /** Milliseconds since the child started the entry. */
  readonly elapsedMs: number;
  /** The running call's reach, once an Agent entry is running under a policy. */
  readonly reach?: ReachFigures;
  /** Recursion, loop warnings and steps of the run (what a runaway inside one agent climbs). */
  readonly guards?: GuardFigures;
}

function count(value: number | null): string {
  if (value === null || value === Infinity) return "∞";
  if (value >= 1_000_000) return `${Number((value / 1_000_000).toFixed(1))}M`;
  if (value >= 1000) return `${Number((value / 1000).toFixed(1))}k`;
  return String(Math.round(value));
}

function megabytes(value: number | null): string {
  return value === null || value === Infinity ? "∞" : `${Number(value.toFixed(1))}MB`;
}

/**
 * Elapsed time as `mm:ss` (or `h:mm:ss` past an hour).
 * @example
 * ```ts
 * clock(72_000); // "01:12"
 * ```
 */
export function clock(ms: number): string {
  const seconds = Math.floor(ms / 1000);
  const two = (n: number) => String(n).padStart(2, "0");
  const hours = Math.floor(seconds / 3600);
  return hours > 0 ? `${hours}:${two(Math.floor(seconds / 60) % 60)}:${two(seconds % 60)}` : `${two(Math.floor(seconds / 60))}:${two(seconds % 60)}`;
}

/**
 * `Recursion 4/5 WikiAgent.wiki_agent | Loop warnings 0 | Steps 4/100 |`:
 * the deepest same-function nesting against its ceiling (reach depth counts
 * Agent entries only, so an agent calling itself as a tool stays at depth
 * 1), loop-detection warnings (and blocks, once there are any), and model
 * requests against `maxSteps`.
 */
function guardParts(guards: GuardFigures): string[] {
  const { recursion, loops, steps } = guards;
  return [
    `Recursion ${recursion.used}/${recursion.limit}${recursion.name === "" ? "" : ` ${recursion.name}`} |`,
    `Loop warnings ${loops.warnings}${loops.blocks > 0 ? `, blocks ${loops.blocks}` : ""} |`,
    `Steps ${steps.used}/${count(steps.limit)} |`,
  ];
}

/**
 * The status line of a run, e.g.
 * `[REACH] Depth 2/3 | Memory 642.3MB/820MB | Zone local | Tokens 12.4k/50k | 00:12`
 * (with guard figures: `[REACH] Depth 1/5 | Recursion 4/5 WikiAgent.wiki_agent | Loop warnings 0 | Steps 4/100 | Memory …`),
 * with ` | stalled` appended when the child has not published for the stall timeout.
 * @example
 * ```ts
 * formatStatusLine({ seq: 1, elapsedMs: 12_000, reach }, { stalled: false });
 * ```
 */
export function formatStatusLine(status: StatusMessage | undefined, options: { stalled: boolean; elapsedMs: number }): string {
  const reach = status?.reach;
  const parts = ["[REACH]"];
  if (reach === undefined) {
    parts.push(status === undefined ? "starting" : "running");
  } else {
    parts.push(`Depth ${reach.depth.used}/${count(reach.depth.limit)} |`);
    if (status?.guards !== undefined) parts.push(...guardParts(status.guards));
    parts.push(
      `Memory ${megabytes(reach.memoryMb.used)}/${megabytes(reach.memoryMb.limit)} |`,
      `Zone ${reach.zone} |`,
      `Tokens ${count(reach.tokens.used)}/${count(reach.tokens.limit)}`,
    );
    const cost = reach.costUsd;
    if (cost.limit !== null && cost.limit !== Infinity) parts[parts.length - 1] += ` | Cost $${cost.used.toFixed(2)}/$${cost.limit.toFixed(2)}`;
  }
  parts.push(`| ${clock(options.elapsedMs)}`);
  if (options.stalled) parts.push("| stalled");
  return parts.join(" ");
}
