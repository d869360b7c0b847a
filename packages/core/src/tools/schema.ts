import type { JsonSchema } from "../model/model-provider";
import { boundProblems, validateJsonSchema } from "@rein/guard";

/**
 * A schema in the Standard Schema form (zod 4, valibot, arktype…): Rein
 * validates through `~standard.validate` and converts to JSON Schema through
 * `~standard.jsonSchema` or the schema's own `toJSONSchema()`.
 */
export interface StandardSchemaLike {
  readonly "~standard": {
    readonly validate: (value: unknown) => StandardResult | Promise<StandardResult>;
    readonly jsonSchema?: { readonly input: (options: { target: string }) => JsonSchema };
  };
  toJSONSchema?: () => JsonSchema;
}

type StandardResult =
  | { readonly value: unknown; readonly issues?: undefined }
  | { readonly issues: ReadonlyArray<{ readonly message: string; readonly path?: ReadonlyArray<PropertyKey | { key: PropertyKey }> }> };

/** Tool parameters: a JSON Schema object, or a Standard Schema such as a zod schema. */
export type ParametersSchema = JsonSchema | StandardSchemaLike;

/** A schema in both forms the runtime needs: JSON Schema for the model, a validator for the arguments. */
export interface ResolvedSchema {
  readonly jsonSchema: JsonSchema;
  /** Resolves with the (possibly transformed) arguments, or a list of problems. */
  validate(args: unknown): Promise<{ ok: true; value: unknown } | { ok: false; problems: string[] }>;
}

/** True for zod 4 / valibot / arktype schemas. */
export function isStandardSchema(value: unknown): value is StandardSchemaLike {
  return typeof value === "object" && value !== null && "~standard" in value;
}

/** Normalises tool parameters. `where` names the tool or method in error messages; `fromJson`: the schema came as JSON (read as JSON Schema only). */
export function resolveSchema(parameters: ParametersSchema, where: string, fromJson = false): ResolvedSchema {
  // A schema that came as JSON (an MCP tool's) is JSON Schema, whatever keys it holds: never a schema library's object.
  if (!fromJson && isStandardSchema(parameters)) {
    const jsonSchema = standardToJsonSchema(parameters, where);
    return {
      jsonSchema,
      async validate(args) {
        const result = await parameters["~standard"].validate(args);
        if (result.issues === undefined) return { ok: true, value: result.value };
        return {
          ok: false,
          problems: boundProblems(result.issues.map((issue) => `${issuePath(issue.path)}: ${issue.message}`)),
        };
      },
    };
  }
  const json = parameters as JsonSchema;
  if (typeof json !== "object" || json === null || Array.isArray(json)) {
    throw new TypeError(`${where}: parameters must be a JSON Schema object or a zod (Standard Schema) schema`);
  }
  if (json["type"] !== undefined && json["type"] !== "object") {
    throw new TypeError(`${where}: parameters must describe an object (type "object"), got type ${JSON.stringify(json["type"])}`);
  }
  const jsonSchema: JsonSchema = { type: "object", properties: {}, ...json };
  return {
    jsonSchema,
    async validate(args) {
      const problems = validateJsonSchema(jsonSchema, args);
      return problems.length === 0 ? { ok: true, value: args } : { ok: false, problems };
    },
  };
}

function standardToJsonSchema(schema: StandardSchemaLike, where: string): JsonSchema {
  let converted: JsonSchema | undefined;
  try {
    converted = schema["~standard"].jsonSchema?.input({ target: "draft-2020-12" }) ?? schema.toJSONSchema?.();
  } catch (error) {
    throw new TypeError(`${where}: could not convert the parameters schema to JSON Schema: ${(error as Error).message}`);
  }
  if (converted === undefined) {
    throw new TypeError(`${where}: this schema library cannot produce JSON Schema; pass a JSON Schema object as parameters`);
  }
  const { $schema: _ignored, ...rest } = converted as Record<string, unknown>;
  return rest;
}

function issuePath(path: ReadonlyArray<PropertyKey | { key: PropertyKey }> | undefined): string {
  let text = "arguments";
  for (const segment of path ?? []) {
    const key = typeof segment === "object" ? segment.key : segment;
    text += typeof key === "number" ? `[${key}]` : `.${String(key)}`;
  }
  return text;
}
