import type { SessionGraph } from "./session-graph";
import type { SessionNode } from "./session-node";
import { SessionNodeNotFoundError } from "./session-errors";

/**
 * Which nodes a model request sees, applied after the DAG selection:
 * `"dag"` keeps it as is, `"current_call"` keeps only nodes that ran inside
 * the current call, `false` sends no history, and a callback keeps the
 * nodes it returns true for.
 * @default "dag"
 * @example
 * ```ts
 * const onlyCode: HistoryFilter = (node) => node.role === "code";
 * ```
 */
export type HistoryFilter = "dag" | "current_call" | false | ((node: SessionNode) => boolean);

/**
 * How far history reaches, read from the current call's
 * `metadata.renderRange` unless given to {@link selectHistory}.
 * A missing field means unlimited.
 * @example
 * ```ts
 * writer.append({ id, role: "code", name, metadata: { status: "running", renderRange: { callers: 0, subcalls: 1 } } });
 * ```
 */
export interface RenderRange {
  /**
   * How many enclosing calls' spines to include above the current call's
   * own spine: 0 = only what happened inside the current call, 1 = also the
   * spine of the scope that called it, and so on.
   * @default Infinity
   */
  callers?: number;
  /**
   * How deep to render the call subtree under each spine node: 0 = spine
   * nodes only, 1 = also the nodes that ran directly inside them, and so on.
   * @default Infinity
   */
  subcalls?: number;
  /**
   * How many turns (top-level nodes on the conversation spine: calls, and
   * user nodes) history reaches back, the current one included: the last
   * N. The stores read
   * only these turns, so a long session costs what N turns cost.
   * @default Infinity
   */
  turns?: number;
}

/**
 * Options of {@link selectHistory}.
 * @example
 * ```ts
 * selectHistory(graph, { headId: "l3", currentCallId: "c2", filter: "current_call" });
 * ```
 */
export interface SelectHistoryOptions {
  /**
   * The last node of the current scope (or the current call node itself,
   * when nothing has run inside it yet); null for an empty session.
   */
  headId: string | null;
  /**
   * The code node of the call the request is made in.
   * @default the head's `caller`
   */
  currentCallId?: string | null;
  /** @default "dag" */
  filter?: HistoryFilter;
  /** Overrides the current call's `metadata.renderRange`. */
  renderRange?: RenderRange;
}

/** The spine from the `turns`-th last top-level node on (a spine inside a call has none and stays whole). */
function lastTurns(spine: SessionNode[], turns: number): SessionNode[] {
  if (turns === Infinity) return spine;
  let seen = 0;
  for (let index = spine.length - 1; index >= 0; index--) {
    if (spine[index]!.caller === null && ++seen === turns) return index === 0 ? spine : spine.slice(index);
  }
  return spine;
}

/** The `expose` metadata values (a node without it is fully visible). */
type Expose = "hidden" | "io" | "llm" | undefined;

function exposeOf(node: SessionNode): Expose {
  const value = node.metadata["expose"];
  return value === "hidden" || value === "io" || value === "llm" ? value : undefined;
}

function rangeOf(node: SessionNode | undefined): RenderRange | undefined {
  const value = node?.metadata["renderRange"];
  return typeof value === "object" && value !== null ? (value as RenderRange) : undefined;
}

/**
 * Selects, in order, the nodes a model request should see as history: the
 * predecessor spine of the head plus each spine node's caller subtree, then
 * the spines of the enclosing calls up to `renderRange.callers` levels
 * (each enclosing call node appears once, its inside coming from the inner
 * spine). `expose` is honoured everywhere: `"hidden"` nodes (and what ran
 * inside them) never appear, a code node with `"io"` shows no llm nodes in
 * its subtree, one with `"llm"` shows no code children. The `filter` is
 * applied last. Pure: works on any {@link SessionGraph}, persisted or not.
 *
 * @example
 * ```ts
 * const nodes = selectHistory(writer.load(), { headId: writer.head, filter: "dag" });
 * ```
 */
export function selectHistory(graph: SessionGraph, options: SelectHistoryOptions): SessionNode[] {
  const filter = options.filter ?? "dag";
  if (filter === false || options.headId === null) return [];
  const head = graph.get(options.headId);
  if (head === undefined) throw new SessionNodeNotFoundError("(graph)", options.headId, "session graph");

  // The scope the request runs in: the inside of the current call.
  const scopeCallId = options.currentCallId === head.id ? head.id : head.caller;
  const currentCallId = options.currentCallId ?? scopeCallId;
  const range = options.renderRange ?? rangeOf(currentCallId === null ? undefined : graph.get(currentCallId)) ?? {};
  const callersLimit = range.callers ?? Infinity;
  const subcallsLimit = range.subcalls ?? Infinity;
  const turnsLimit = range.turns ?? Infinity;

  // Levels from the innermost scope outwards: the spine to walk, and the
  // enclosing call whose inside the inner level already renders.
  const levels: { spineHead: SessionNode | null; enclosing: string | null }[] = [
    { spineHead: scopeCallId === head.id ? null : head, enclosing: null },
  ];
  let callId = scopeCallId;
  for (let depth = 0; callId !== null && depth < callersLimit; depth++) {
    const call = graph.get(callId);
    if (call === undefined) break;
    levels.push({ spineHead: call, enclosing: call.id });
    callId = call.caller;
  }

  const selected: SessionNode[] = [];
  const renderInside = (node: SessionNode, depth: number, hideLlm: boolean): void => {
    if (depth > subcallsLimit) return;
    const hideCode = exposeOf(node) === "llm";
    for (const child of graph.childrenOf(node.id)) {
      const expose = exposeOf(child);
      if (expose === "hidden") continue;
      if (child.role === "code" ? hideCode : child.role === "llm" && hideLlm) continue;
      selected.push(child);
      renderInside(child, depth + 1, hideLlm || expose === "io");
    }
  };

  for (let index = levels.length - 1; index >= 0; index--) {
    const { spineHead, enclosing } = levels[index]!;
    if (spineHead === null) continue;
    for (const node of lastTurns(graph.spine(spineHead.id), turnsLimit)) {
      const expose = exposeOf(node);
      if (expose === "hidden") continue;
      selected.push(node);
      if (node.id !== enclosing) renderInside(node, 1, expose === "io");
    }
  }

  if (filter === "dag") return selected;
  if (filter === "current_call") {
    if (currentCallId === null) return [];
    return selected.filter((node) => graph.isDescendantOf(node, currentCallId));
  }
  return selected.filter((node) => filter(node));
}
