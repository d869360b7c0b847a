/**
 * Where `value` stops being plain JSON (null, booleans, finite numbers,
 * strings, arrays, plain objects), as `[path, problem]`, or undefined when
 * it is JSON throughout. Plain JSON survives a save and a load unchanged,
 * which is what a value a store keeps must do: core checks a resumable
 * step's input and result with it before saving them.
 * @example
 * ```ts
 * jsonProblem({ when: new Date() }); // ["when", "is a Date, not a plain object"]
 * ```
 */
export function jsonProblem(value: unknown, path = "", seen: object[] = []): [string, string] | undefined {
  if (value === null) return undefined;
  switch (typeof value) {
    case "string":
    case "boolean":
      return undefined;
    case "number":
      return Number.isFinite(value) ? undefined : [path, `is ${value}`];
    case "object":
      break;
    default:
      return [path, `is ${value === undefined ? "undefined" : `a ${typeof value}`}`];
  }
  const object = value as object;
  if (seen.includes(object)) return [path, "is a circular reference"];
  if (Array.isArray(object)) {
    seen.push(object);
    for (let index = 0; index < object.length; index++) {
      const problem = jsonProblem(object[index], `${path}[${index}]`, seen);
      if (problem !== undefined) return problem;
    }
    seen.pop();
    return undefined;
  }
  const prototype = Object.getPrototypeOf(object) as object | null;
  if (prototype !== Object.prototype && prototype !== null) {
    return [path, `is a ${(object.constructor as { name?: string } | undefined)?.name || "class instance"}, not a plain object`];
  }
  seen.push(object);
  for (const key of Object.keys(object)) {
    const problem = jsonProblem((object as Record<string, unknown>)[key], path === "" ? key : `${path}.${key}`, seen);
    if (problem !== undefined) return problem;
  }
  seen.pop();
  return undefined;
}
