/**
 * JSON of anything a run may answer or emit: Infinity becomes null (an
 * unlimited budget), a bigint its digits, an Error its name and message, a
 * cycle "[Circular]". A value reached twice without a cycle (one content
 * block in two lists of a recorded node) is written both times. Every route
 * that writes a run's values uses it.
 * @internal
 */
export function safeJson(value: unknown): string {
  // The objects from the root to the one being written: only a value among them closes a cycle.
  const ancestors: object[] = [];
  return JSON.stringify(value, function (this: unknown, _key, v: unknown) {
    if (typeof v === "bigint") return v.toString();
    if (typeof v === "number" && !Number.isFinite(v)) return null;
    if (v instanceof Error) return { name: v.name, message: v.message };
    if (typeof v === "object" && v !== null) {
      while (ancestors.length > 0 && ancestors[ancestors.length - 1] !== this) ancestors.pop();
      if (ancestors.includes(v)) return "[Circular]";
      ancestors.push(v);
    }
    return v;
  });
}
