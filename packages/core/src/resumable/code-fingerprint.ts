import { createHash } from "node:crypto";

/** The code version of a resumable method: a hash per function, and one over them all. @internal */
export interface CodeFingerprint {
  /** Hash over every part. */
  readonly fingerprint: string;
  /** Function name (the method as `Class.method`, helpers as `helper name`) → hash of its source. */
  readonly parts: Readonly<Record<string, string>>;
}

function hash(text: string): string {
  return createHash("sha256").update(text).digest("base64url").slice(0, 22);
}

/** The fingerprint of `method` (named `name`) and the helpers it lists. @internal */
export function codeFingerprint(name: string, method: (...args: never[]) => unknown, helpers: readonly ((...args: never[]) => unknown)[]): CodeFingerprint {
  const parts: Record<string, string> = { [name]: hash(Function.prototype.toString.call(method)) };
  helpers.forEach((helper, index) => {
    // Helpers often share a name (`format` of two modules): a repeated name gets its position, so none hides another.
    const named = `helper ${helper.name || `#${index}`}`;
    parts[named in parts ? `${named} #${index}` : named] = hash(Function.prototype.toString.call(helper));
  });
  const fingerprint = hash(
    Object.entries(parts)
      .map(([part, digest]) => `${part}=${digest}`)
      .join("\n"),
  );
  return { fingerprint, parts };
}

/** The parts that differ between two versions, named: `"Pipeline.process"`, `"helper format"`. @internal */
export function changedParts(saved: CodeFingerprint, current: CodeFingerprint): string[] {
  const names = new Set([...Object.keys(saved.parts), ...Object.keys(current.parts)]);
  return [...names].filter((name) => saved.parts[name] !== current.parts[name]);
}
