import type { JsonSchema, ResponseFormat } from "../model/model-provider";
import { resolveSchema, type ParametersSchema } from "../tools/schema";

/**
 * A structured final answer as the loop uses it: what goes on the wire, and
 * the validator of what comes back.
 * @internal
 */
export interface ResolvedResponseFormat {
  readonly wire: ResponseFormat;
  validate(value: unknown): Promise<{ ok: true; value: unknown } | { ok: false; problems: string[] }>;
}

/**
 * Resolves a `responseFormat` (a zod / Standard Schema, or a JSON Schema
 * object) into its JSON Schema and validator. The name is the schema's
 * `title` made safe, else "response"; `strict` is asked for when the schema
 * closes its objects (`additionalProperties: false`), as OpenAI's strict
 * mode requires.
 * @internal
 */
export function resolveResponseFormat(format: ParametersSchema, where: string): ResolvedResponseFormat {
  const resolved = resolveSchema(format, `${where} responseFormat`);
  const schema: JsonSchema = resolved.jsonSchema;
  const title = typeof schema["title"] === "string" ? schema["title"].replace(/[^A-Za-z0-9_-]+/g, "_").slice(0, 64) : "";
  return {
    wire: { name: title === "" ? "response" : title, schema, strict: schema["additionalProperties"] === false },
    validate: (value) => resolved.validate(value),
  };
}

/**
 * Reads a final answer as the structured value: JSON text (a Markdown code
 * fence around it is tolerated), then validated. Problems say what to fix.
 * @internal
 */
export async function readStructuredAnswer(
  text: string,
  format: ResolvedResponseFormat,
): Promise<{ ok: true; value: unknown } | { ok: false; problems: string[] }> {
  const fenced = /^\s*```(?:json)?\s*([\s\S]*?)\s*```\s*$/.exec(text);
  const json = (fenced?.[1] ?? text).trim();
  let value: unknown;
  try {
    value = JSON.parse(json);
  } catch (error) {
    return { ok: false, problems: [`the answer is not JSON (${(error as Error).message})`] };
  }
  return format.validate(value);
}

/** The repair request: what was wrong, and what to send instead. @internal */
export function repairPrompt(problems: readonly string[], format: ResolvedResponseFormat): string {
  return (
    `Your answer does not match the required response format '${format.wire.name}': ${problems.join("; ")}. ` +
    `Answer again with only a JSON value that matches this JSON Schema, no other text:\n${JSON.stringify(format.wire.schema)}`
  );
}
