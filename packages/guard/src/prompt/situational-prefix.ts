/** Optional lines of the situational prefix; each appears only when given. */
export interface SituationalExtras {
  /** The active call chain by readable name, outermost first, or already joined. Rendered `A → B → C`. */
  callPath?: readonly string[] | string;
  /** Where this call sits in a larger task (`"step 2 of 4"`, `"depth 3 of 5"`). */
  position?: string;
  /** What the function must return (`"a JSON object { title, summary }"`). */
  outputContract?: string;
  /** The name the function has in the model's tool list, when it differs from `fnName` (`wiki_agent` for `WikiAgent.wiki_agent`). */
  toolName?: string;
}

/**
 * The text that tells the model where it is: inside `fnName`, which its tool
 * list may well contain, and that calling it would re-enter the running
 * execution. The runtime puts it first in the current user turn, never in the
 * system prompt, so the system prefix stays byte-identical and cached.
 *
 * The warning comes before the job description; an empty description adds no
 * job line.
 *
 * @example
 * ```ts
 * situationalPrefix("wiki_agent", "Research a topic on the wiki.", { callPath: ["main", "wiki_agent"] });
 * ```
 */
export function situationalPrefix(fnName: string, fnDoc?: string, extras?: SituationalExtras): string {
  const listed = extras?.toolName !== undefined && extras.toolName !== fnName ? `it (as the tool \`${extras.toolName}\`)` : `\`${fnName}\` itself`;
  const lines = [
    `You are running INSIDE the function \`${fnName}\`; this request is part of its execution.`,
    `Your tool list may include ${listed} — do NOT call it: calling it re-enters the execution you are part of and causes infinite recursion.`,
    `Use the lower-level tools to do the work directly.`,
  ];
  const callPath = extras?.callPath;
  if (callPath !== undefined && callPath.length > 0) {
    lines.push(`Call path: ${typeof callPath === "string" ? callPath : callPath.join(" → ")}`);
  }
  if (extras?.position) lines.push(`Position: ${extras.position}`);
  const job = fnDoc?.trim();
  if (job) lines.push(`Your job: ${job}`);
  if (extras?.outputContract) lines.push(`Output contract: ${extras.outputContract}`);
  return lines.join("\n");
}
