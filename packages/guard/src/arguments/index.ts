export { validateJsonSchema, boundProblems, MAX_LISTED_PROBLEMS, type JsonSchemaObject } from "./json-schema-validator";
