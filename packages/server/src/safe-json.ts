/**
 * JSON of anything a run may answer or emit: Infinity becomes null (an
 * unlimited budget), a bigint its digits, an Error its name and message, a
 * cycle "[Circular]". Every route that writes a run's values uses it.
 * @internal
 */
export function safeJson(value: unknown): string {
  const seen = new WeakSet<object>();
  return JSON.stringify(value, (_key, v: unknown) => {
    if (typeof v === "bigint") return v.toString();
    if (typeof v === "number" && !Number.isFinite(v)) return null;
    if (v instanceof Error) return { name: v.name, message: v.message };
    if (typeof v === "object" && v !== null) {
      if (seen.has(v)) return "[Circular]";
      seen.add(v);
    }
    return v;
  });
}
