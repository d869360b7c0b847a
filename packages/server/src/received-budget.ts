import { clampBudget, inspectPolicyHeader, type ReachBudget, type ReachPolicy } from "rein";
import { RequestError } from "./http-error";

/**
 * The budget a request brings in `X-Agent-Policy`, clamped to the local
 * `policy`, with the caller's run that issued it (`r` of a signed header).
 * No header: a root budget when `mint` allows one, else 400 `missing_policy`;
 * an expired, forged or (with a secret set) unsigned header is 400 `invalid_policy`.
 * @internal
 */
export function receivedBudget(header: string | undefined, mint: boolean, policy: ReachPolicy, maxTtlMs?: number): { budget: ReachBudget; callerRunId?: string } {
  if (header === undefined || header === "") {
    if (mint) return { budget: clampBudget({ depth: Infinity }, policy.limits) };
    throw new RequestError("missing_policy", "X-Agent-Policy header is required (a caller passes its budget on with reachFetch; or start the server with mintRootBudget)");
  }
  try {
    // An expired, forged or unsigned (with a secret set) header is refused here: 400 invalid_policy.
    const { budget, runId } = inspectPolicyHeader(header, maxTtlMs === undefined ? {} : { maxTtlMs });
    return { budget: clampBudget(budget, policy.limits), ...(runId === undefined ? {} : { callerRunId: runId }) };
  } catch (error) {
    throw new RequestError("invalid_policy", `X-Agent-Policy is not valid: ${(error as Error).message}`);
  }
}
