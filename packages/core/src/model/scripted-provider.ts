import { ReinError } from "@rein/guard";
import { checkScriptedProviderArguments, type ScriptedProviderOptions } from "./scripted-provider-options";
import type { ContentBlock, ToolUseBlock } from "./content";
import type {
  ModelCallOptions,
  ModelProvider,
  ModelRequest,
  ModelResponse,
  ModelStreamEvent,
  StopReason,
  Usage,
} from "./model-provider";

/** A tool call in a scripted turn. */
export interface ScriptedToolCall {
  name: string;
  /** Arguments object. */
  input?: unknown;
  /** Raw argument text, as a model would send it; invalid JSON becomes a malformed call. */
  rawArguments?: string;
  /** Call id; generated when omitted. */
  id?: string;
}

/**
 * One scripted assistant turn: plain text, a structured turn, an `Error` to
 * throw (simulating a provider failure), or a function of the request that
 * returns one of those (for models that react to what they are sent).
 */
export type ScriptedTurn =
  | string
  | Error
  | { text?: string; toolCalls?: ScriptedToolCall[]; stopReason?: StopReason; usage?: Partial<Usage> }
  | ((request: ModelRequest, index: number) => ScriptedTurn);

/**
 * A {@link ModelProvider} that replays scripted assistant turns and records
 * every request it receives, so tests can assert on exactly what the model
 * saw (`{ recordRequests: false }` keeps none, for benchmarks). Ships with
 * core for tests, examples and demos.
 *
 * @example
 * ```ts
 * const model = new ScriptedProvider([{ toolCalls: [{ name: "search", input: { q: "x" } }] }, "Done."]);
 * await new Researcher({ runtime: new Runtime({ provider: model }) }).research("x");
 * model.requests[1].messages; // what the model saw on its second request
 * ```
 */
export class ScriptedProvider implements ModelProvider {
  readonly specificationVersion = "rein-model-v1" as const;
  readonly providerId = "scripted";
  readonly modelId: string;
  /** Every request received, in order (deep copies, safe from later mutation); empty with `recordRequests: false`. */
  readonly requests: ModelRequest[] = [];
  private readonly turns: ScriptedTurn[];
  private readonly whenExhausted: "error" | "repeat-last";
  private readonly recordRequests: boolean;
  private callCounter = 0;
  private received = 0;

  constructor(turns: ScriptedTurn[] = [], options: ScriptedProviderOptions = {}) {
    checkScriptedProviderArguments(turns, options);
    this.turns = [...turns];
    this.modelId = options.modelId ?? "scripted";
    this.whenExhausted = options.whenExhausted ?? "error";
    this.recordRequests = options.recordRequests ?? true;
  }

  /** How many requests were received (recorded or not). */
  get requestCount(): number {
    return this.received;
  }

  /** Appends more turns to play. */
  push(...turns: ScriptedTurn[]): this {
    this.turns.push(...turns);
    return this;
  }

  async complete(request: ModelRequest, options?: ModelCallOptions): Promise<ModelResponse> {
    options?.signal?.throwIfAborted();
    const index = this.received++;
    if (this.recordRequests) this.requests.push(structuredClone(request));
    return this.toResponse(this.turnAt(index), request, index);
  }

  async *stream(request: ModelRequest, options?: ModelCallOptions): AsyncIterable<ModelStreamEvent> {
    const response = await this.complete(request, options);
    for (const block of response.content) {
      if (block.type === "text") {
        for (let i = 0; i < block.text.length; i += 4) yield { type: "text-delta", text: block.text.slice(i, i + 4) };
      } else if (block.type === "tool_use") {
        yield { type: "tool-call-start", id: block.id, name: block.name };
        const json = typeof block.input === "string" ? block.input : JSON.stringify(block.input);
        for (let i = 0; i < json.length; i += 3) {
          yield { type: "tool-call-delta", id: block.id, argumentsDelta: json.slice(i, i + 3) };
        }
      }
    }
    yield { type: "response", response };
  }

  private turnAt(index: number): ScriptedTurn {
    if (index < this.turns.length) return this.turns[index];
    if (this.whenExhausted === "repeat-last" && this.turns.length > 0) return this.turns[this.turns.length - 1];
    throw new ReinError(
      `ScriptedProvider has no turn for request ${index + 1} (it was given ${this.turns.length}); ` +
        `add turns, or pass { whenExhausted: "repeat-last" }`,
    );
  }

  private toResponse(turn: ScriptedTurn, request: ModelRequest, index: number): ModelResponse {
    if (typeof turn === "function") return this.toResponse(turn(request, index), request, index);
    if (turn instanceof Error) throw turn;
    const structured = typeof turn === "string" ? { text: turn } : turn;
    const content: ContentBlock[] = [];
    if (structured.text !== undefined && structured.text !== "") content.push({ type: "text", text: structured.text });
    for (const call of structured.toolCalls ?? []) content.push(this.toToolUse(call));
    const hasCalls = content.some((block) => block.type === "tool_use");
    return {
      content,
      stopReason: structured.stopReason ?? (hasCalls ? "tool_use" : "end_turn"),
      usage: { inputTokens: 10, outputTokens: 5, ...structured.usage },
      model: request.model ?? this.modelId,
    };
  }

  private toToolUse(call: ScriptedToolCall): ToolUseBlock {
    const id = call.id ?? `call_${++this.callCounter}`;
    if (call.rawArguments === undefined) return { type: "tool_use", id, name: call.name, input: call.input ?? {} };
    try {
      return { type: "tool_use", id, name: call.name, input: JSON.parse(call.rawArguments) };
    } catch (error) {
      return {
        type: "tool_use",
        id,
        name: call.name,
        input: call.rawArguments,
        inputError: `arguments are not valid JSON: ${(error as Error).message}`,
      };
    }
  }
}
