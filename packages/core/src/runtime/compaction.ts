import type { ContentBlock, Message } from "../model/content";
import { textOf } from "../model/content";
import type { Logger } from "pino";
import { ReachError } from "@rein/guard";
import { abortReason } from "./cancellation";
import { sendModelRequest, type RequestSite } from "./model-request-gate";

/** What compaction produced. */
export interface Compaction {
  readonly messages: Message[];
  readonly summary: string;
  /** How many messages the summary replaced. */
  readonly removed: number;
  /** True when the summary came from truncation because the summary request failed. */
  readonly truncated: boolean;
}

const SUMMARY_INSTRUCTIONS =
  "You compact conversations. Summarize the transcript you are given so the work can continue: " +
  "keep facts, decisions, tool results that still matter, and what remains to do. Be concise.";
const TRUNCATED_CHARS = 2_000;

/**
 * Replaces the oldest part of a loop's conversation with a summary: the
 * messages before the latest assistant turn are summarized by one tools-off
 * model request through the run's request gate (truncated deterministically
 * when that request fails; a reach refusal or an abort ends the run), and
 * the conversation restarts from a user turn holding `leading` blocks (the
 * situational prefix) and the summary. Returns undefined when there is
 * nothing older than the latest turn to compact.
 */
export async function compactConversation(
  messages: readonly Message[],
  leading: readonly ContentBlock[],
  options: { site: RequestSite; model: string; logger: Logger },
): Promise<Compaction | undefined> {
  let cut = -1;
  for (let i = messages.length - 1; i > 0; i--) {
    if (messages[i].role === "assistant") {
      cut = i;
      break;
    }
  }
  if (cut <= 0) return undefined;
  const older = messages.slice(0, cut);
  const transcript = older.map((message) => `${message.role.toUpperCase()}: ${render(message.content)}`).join("\n\n");
  let summary: string;
  let truncated = false;
  const { site } = options;
  try {
    // Through the run's one request gate: counted in its steps, its reach budget and its ledger, like any request.
    const { response } = await sendModelRequest(site, {
      request: {
        model: options.model,
        system: SUMMARY_INSTRUCTIONS,
        messages: [{ role: "user", content: [{ type: "text", text: `Transcript to summarize:\n\n${transcript}` }] }],
        tools: [],
      },
      stream: false,
      recordedInput: undefined,
    });
    summary = textOf(response.content).trim();
    if (summary === "") throw new Error("empty summary");
  } catch (error) {
    if (site.execution.aborted) throw site.execution.abortError;
    const signal = site.scope.signal;
    if (signal?.aborted === true) throw abortReason(signal);
    // A budget that cannot afford the summary ends the run: truncating instead would carry on past the budget.
    if (ReachError.isInstance(error)) throw error;
    truncated = true;
    summary =
      transcript.length <= TRUNCATED_CHARS * 2
        ? transcript
        : `${transcript.slice(0, TRUNCATED_CHARS)}\n[… ${transcript.length - TRUNCATED_CHARS * 2} characters omitted …]\n${transcript.slice(-TRUNCATED_CHARS)}`;
    options.logger.warn({ err: error }, "compaction summary request failed; truncated instead");
  }
  const opening: Message = { role: "user", content: [...leading, summaryBlock(summary)] };
  return { messages: [opening, ...messages.slice(cut)], summary, removed: older.length, truncated };
}

/** The block a summary stands in as, in the loop that compacted and in the history of later requests. @internal */
export function summaryBlock(summary: string): ContentBlock {
  return { type: "text", text: `[Summary of the earlier conversation]\n${summary}` };
}

/**
 * Puts a recorded compaction in place in rendered history, as the loop did:
 * every message before the latest assistant turn becomes one user turn
 * holding the summary. @internal
 */
export function replaceWithSummary(messages: Message[], summary: string): void {
  let cut = -1;
  for (let i = messages.length - 1; i > 0 && cut < 0; i--) if (messages[i].role === "assistant") cut = i;
  if (cut > 0) messages.splice(0, cut, { role: "user", content: [summaryBlock(summary)] });
}

function render(content: readonly ContentBlock[]): string {
  return content
    .map((block) => {
      switch (block.type) {
        case "text":
          return block.text;
        case "tool_use":
          return `[called ${block.name}(${JSON.stringify(block.input)})]`;
        case "tool_result":
          return `[result${block.isError ? " (error)" : ""}: ${typeof block.content === "string" ? block.content : render(block.content)}]`;
        case "image":
          return "[image]";
      }
    })
    .join("\n");
}
