import { DecisionError } from "@rein/guard";
import type { ChoiceOptions } from "./agent-options";

/** One option of `agent.choose`, normalised. */
export interface Choice {
  readonly id: string;
  readonly description?: string;
}

/** The options of `agent.choose` as a list of `{ id, description? }`, checked (non-empty, unique, non-blank ids). */
export function normaliseChoices(options: ChoiceOptions): Choice[] {
  let choices: { id: string; description?: string }[];
  if (Array.isArray(options)) {
    choices = (options as readonly (string | { id: string; description?: string })[]).map((option) =>
      typeof option === "string" ? { id: option } : option,
    );
  } else if (typeof options === "object" && options !== null) {
    choices = Object.entries(options as Record<string, string>).map(([id, description]) => ({ id, description }));
  } else {
    throw new TypeError("choose() expects options as an array of ids, an array of { id, description }, or { id: description }");
  }
  if (choices.length === 0) throw new TypeError("choose() needs at least one option");
  const seen = new Set<string>();
  for (const choice of choices) {
    if (typeof choice?.id !== "string" || choice.id.trim() === "") throw new TypeError("choose() option ids must be non-empty strings");
    if (seen.has(choice.id)) throw new TypeError(`choose() option '${choice.id}' appears twice`);
    seen.add(choice.id);
  }
  return choices;
}

/** The prompt `agent.choose` sends: the question, then the options, asking for an id only. */
export function choicePrompt(prompt: string, choices: readonly Choice[]): string {
  const listing = choices.map(({ id, description }) => (description ? `- ${id}: ${description}` : `- ${id}`)).join("\n");
  return `${prompt}\n\nChoose exactly one of these options and answer with its id only, nothing else:\n${listing}`;
}

/**
 * The option the model's answer names: exactly, else ignoring case, once
 * quotes, backticks, stars and a final period are trimmed.
 * @throws {DecisionError} when the answer names none of them
 */
export function chosenId(answer: string, choices: readonly Choice[]): string {
  const cleaned = answer.trim().replace(/^[`"'*\s]+|[`"'*.\s]+$/g, "");
  const ids = choices.map((choice) => choice.id);
  const exact = ids.find((id) => id === cleaned) ?? ids.find((id) => id.toLowerCase() === cleaned.toLowerCase());
  if (exact === undefined) throw new DecisionError(answer.trim(), ids);
  return exact;
}
