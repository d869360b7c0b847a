import { randomUUID } from "node:crypto";
import { Context } from "../context/context";
import type { ContentBlock } from "../model/content";
import { InMemorySessionStore } from "@rein/session";
import { Agent } from "./agent";
import type { ResumeTurnOptions, TurnContinuation, TurnOptions, TurnRequest, TurnResult } from "./turns";

/**
 * An agent for chat: every turn continues one session. With a Context that
 * records to a store (constructor option or class default), that session;
 * without one, a session of its own in memory, kept for the agent's life.
 * `chat` and `runTurn` are turn entries: a subclass overriding them starts a
 * turn, not a scoped call.
 * @example
 * ```ts
 * class Assistant extends ChatAgent {
 *   static instructions = "You are a concise assistant.";
 * }
 * const assistant = new Assistant();
 * await assistant.chat("Hi, I'm Ada.");
 * const { text } = await assistant.chat("What's my name?"); // the first turn is history
 * ```
 */
export class ChatAgent extends Agent {
  #own: Context | undefined;

  /** One turn of the conversation: `message` as the user's input. */
  chat(message: string | readonly ContentBlock[], options: Omit<TurnOptions, "context"> = {}): Promise<TurnResult> {
    return this.runTurn({ input: message }, options);
  }

  override runTurn(request: TurnRequest, options: TurnOptions = {}): Promise<TurnResult> {
    return super.runTurn(request, options.context === undefined ? { ...options, context: this.conversation } : options);
  }

  override resumeTurn(continuation: TurnContinuation, options: ResumeTurnOptions): Promise<TurnResult> {
    return super.resumeTurn(continuation, options.context === undefined ? { ...options, context: this.conversation } : options);
  }

  /** The Context every turn records to: the agent's, when it records to a store, else the agent's own session. */
  get conversation(): Context {
    const configured = this.contextFor(undefined);
    if (configured.store !== undefined) return configured;
    // A session of its own under the configured Context: its blocks, providers and history filter still apply.
    return (this.#own ??= configured.derive({ store: Context.forSession(new InMemorySessionStore(), `chat-${randomUUID()}`).store! }));
  }
}
