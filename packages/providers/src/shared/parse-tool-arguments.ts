/** Tool-call arguments as Rein's `ToolUseBlock` carries them. */
export interface ParsedToolArguments {
  readonly input: unknown;
  readonly inputError?: string;
}

/**
 * Parses the JSON text of a tool call's arguments. Never throws: a model that
 * sends broken JSON gets a tool error result from the runtime, which it can
 * correct, instead of failing the whole run.
 */
export function parseToolArguments(raw: string): ParsedToolArguments {
  // Models calling a tool without parameters often send nothing at all.
  if (raw.trim() === "") return { input: {} };
  try {
    return { input: JSON.parse(raw) as unknown };
  } catch (error) {
    return { input: raw, inputError: `arguments are not valid JSON: ${(error as Error).message}` };
  }
}

/** The JSON text to send back for a tool call the model made earlier. */
export function serializeToolArguments(input: unknown, inputError: string | undefined): string {
  if (inputError !== undefined && typeof input === "string") return input;
  return JSON.stringify(input ?? {});
}
