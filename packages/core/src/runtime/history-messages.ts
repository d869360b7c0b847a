import type { ContentBlock, Message } from "../model/content";
import type { Context } from "../context/context";
import { replaceWithSummary } from "./compaction";
import { selectHistory, type HistoryFilter } from "@rein/session";
import type { SessionNode } from "@rein/session";
import type { SessionNodeWriter } from "@rein/session";

/** Where in the session graph the next request is made. */
export interface HistoryPosition {
  /** The call the request is made in (null: top level). */
  readonly callId: string | null;
  /** The last node written in that call (null: nothing yet). */
  readonly tail: string | null;
  /**
   * The llm node of a paused request being resumed: its input is rendered,
   * its answer and the results of its calls are not (the resume sends them
   * itself, once).
   */
  readonly resumes?: string;
  /** The first llm node of a turn being resumed: from it on, nodes are rendered whatever the Context's history filter. */
  readonly turnStart?: string;
}

/**
 * The conversation a model request continues, rendered from the session
 * graph: llm nodes become user/assistant turns, completed code nodes that
 * were not tool calls become short notes. The result always alternates
 * roles correctly and never ends in an unanswered tool call.
 */
export function historyMessages(writer: SessionNodeWriter, context: Context, position: HistoryPosition): Message[] {
  const contextFilter = context.historyFilter;
  const { turnStart } = position;
  if (contextFilter === false && turnStart === undefined) return [];
  const headId = position.tail ?? position.callId;
  if (headId === null) return [];
  const filter: HistoryFilter =
    typeof contextFilter === "function" ? (node: SessionNode) => contextFilter(node, context) : contextFilter;
  const graph = writer.historyGraph(headId, position.callId);
  const select = (by: HistoryFilter) => selectHistory(graph, { headId, currentCallId: position.callId, filter: by });
  let nodes = select(filter);
  if (turnStart !== undefined && filter !== "dag") {
    // A resumed turn: the filter chooses what came before it; the turn's own requests are all kept.
    const all = select("dag");
    const at = all.findIndex((node) => node.id === turnStart);
    const own = at < 0 ? [] : all.slice(at);
    const ownIds = new Set(own.map((node) => node.id));
    nodes = [...nodes.filter((node) => !ownIds.has(node.id)), ...own];
  }
  return normalise(render(nodes, position.resumes));
}

function render(nodes: readonly SessionNode[], resumes: string | undefined): Message[] {
  const messages: Message[] = [];
  // What ran inside a tool call is summed up by its tool result: nothing under it is rendered.
  const insideToolCalls = new Set<string>();
  const { answered, toolCalls } = toolResultsOf(nodes);
  const byId = new Map(nodes.map((node) => [node.id, node]));
  for (const node of nodes) {
    if (node.caller !== null && insideToolCalls.has(node.caller)) {
      insideToolCalls.add(node.id);
      continue;
    }
    const status = node.metadata["status"];
    if (node.role === "llm") {
      if (status !== "completed") continue;
      const input = contentOf(node.input);
      const output = contentOf(node.output);
      if (input.length > 0) messages.push({ role: "user", content: input });
      if (node.id === resumes) continue;
      if (output.length > 0) messages.push({ role: "assistant", content: output });
      const recovered = recoveredResults(output, answered, toolCalls);
      if (recovered.length > 0) messages.push({ role: "user", content: recovered });
    } else if (node.role === "code") {
      if (node.metadata["toolCallId"] !== undefined) {
        insideToolCalls.add(node.id);
        continue;
      }
      // A top-level turn's compaction stands in for what it replaced, as in the loop that made it (a nested one is its loop's own).
      if (node.metadata["kind"] === "compaction") {
        if (typeof node.output === "string" && inTopLevelTurn(node, byId)) replaceWithSummary(messages, node.output);
        continue;
      }
      // Running calls are the ones this request is made in.
      if (status === "running") continue;
      const outcome = status === "completed" ? `returned ${JSON.stringify(node.output)}` : `ended ${String(status)}`;
      messages.push({
        role: "user",
        content: [{ type: "text", text: `[earlier call] ${node.name}(${argsText(node.input)}) ${outcome}` }],
      });
    } else if (node.role === "user") {
      const content = contentOf(node.input);
      if (content.length > 0) messages.push({ role: "user", content });
    }
  }
  return messages;
}

/** The tool results the rendered requests carried, and the recorded tool calls by their tool call id. */
function toolResultsOf(nodes: readonly SessionNode[]): { answered: Set<string>; toolCalls: Map<string, SessionNode> } {
  const answered = new Set<string>();
  const toolCalls = new Map<string, SessionNode>();
  for (const node of nodes) {
    if (node.role === "llm" && node.metadata["status"] === "completed") {
      for (const block of contentOf(node.input)) if (block.type === "tool_result") answered.add(block.toolUseId);
    } else if (node.role === "code" && typeof node.metadata["toolCallId"] === "string") {
      toolCalls.set(node.metadata["toolCallId"], node);
    }
  }
  return { answered, toolCalls };
}

/**
 * Results for the tool calls of `output` that ran but that no completed
 * request carried back — the run ended after them (a failed or cancelled
 * request, `maxIterations`, a Context provider that threw): rebuilt from
 * the recorded tool calls, so the next request still knows they ran and
 * what they returned (the model does not repeat a payment it cannot see).
 */
function recoveredResults(output: readonly ContentBlock[], answered: ReadonlySet<string>, toolCalls: ReadonlyMap<string, SessionNode>): ContentBlock[] {
  const recovered: ContentBlock[] = [];
  for (const block of output) {
    if (block.type !== "tool_use" || answered.has(block.id)) continue;
    const call = toolCalls.get(block.id);
    const status = call?.metadata["status"];
    if (call === undefined || status === "running") continue;
    recovered.push(
      status === "completed"
        ? { type: "tool_result", toolUseId: block.id, content: typeof call.output === "string" ? call.output : (JSON.stringify(call.output) ?? "(no result)") }
        : { type: "tool_result", toolUseId: block.id, content: `'${block.name}' ended ${String(status)}`, isError: true },
    );
  }
  return recovered;
}

/** True when `node` was written by a top-level turn's loop: at the top level (a bare `ask`), or in a top-level call. */
function inTopLevelTurn(node: SessionNode, byId: ReadonlyMap<string, SessionNode>): boolean {
  return node.caller === null || byId.get(node.caller)?.caller === null;
}

function contentOf(value: unknown): ContentBlock[] {
  if (typeof value === "string") return value === "" ? [] : [{ type: "text", text: value }];
  if (typeof value === "object" && value !== null && Array.isArray((value as { content?: unknown }).content)) {
    return (value as { content: ContentBlock[] }).content;
  }
  return [];
}

function argsText(input: unknown): string {
  if (!Array.isArray(input)) return "";
  return input.map((arg) => JSON.stringify(arg)).join(", ");
}

/**
 * Merges consecutive turns of one role, drops tool calls without results
 * (and results without calls), and removes an unanswered exchange at the
 * end, so any provider accepts the history.
 */
export function normalise(messages: readonly Message[]): Message[] {
  const merged: { role: Message["role"]; content: ContentBlock[] }[] = [];
  for (const message of messages) {
    const last = merged[merged.length - 1];
    if (last !== undefined && last.role === message.role) last.content.push(...message.content);
    else merged.push({ role: message.role, content: [...message.content] });
  }
  for (let i = 0; i < merged.length; i++) {
    const message = merged[i];
    if (message.role !== "assistant") continue;
    const next = merged[i + 1];
    const answered = new Set(
      next?.content.flatMap((block) => (block.type === "tool_result" ? [block.toolUseId] : [])) ?? [],
    );
    const asked = new Set(message.content.flatMap((block) => (block.type === "tool_use" ? [block.id] : [])));
    message.content = message.content.filter((block) => block.type !== "tool_use" || answered.has(block.id));
    if (next !== undefined) {
      next.content = next.content.filter((block) => block.type !== "tool_result" || asked.has(block.toolUseId));
    }
  }
  // A user turn may only carry results answering the assistant turn just before it.
  if (merged[0]?.role === "user") {
    merged[0].content = merged[0].content.filter((block) => block.type !== "tool_result");
  }
  return merged.filter((message) => message.content.length > 0).reduce<Message[]>((out, message) => {
    const last = out[out.length - 1];
    if (last !== undefined && last.role === message.role) {
      out[out.length - 1] = { role: last.role, content: resultsFirst([...last.content, ...message.content]) };
    } else out.push(message.role === "user" ? { role: "user", content: resultsFirst(message.content) } : message);
    return out;
  }, []);
}

/** Tool results first, everything else after, each in its order: the APIs reject text before a tool result. */
export function resultsFirst(content: readonly ContentBlock[]): ContentBlock[] {
  const results = content.filter((block) => block.type === "tool_result");
  if (results.length === 0 || results.length === content.length) return [...content];
  return [...results, ...content.filter((block) => block.type !== "tool_result")];
}
