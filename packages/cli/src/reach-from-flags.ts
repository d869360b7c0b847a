import { existsSync } from "node:fs";
import { resolve } from "node:path";
import { DEFAULT_REACH_CONFIG_PATH, loadReachConfig, ReachPolicy, type ReachPolicyOptions } from "rein";

/**
 * The local reach policy of `rein run`'s child and of `rein serve`:
 * `config/reach.yaml` (or REIN_REACH_CONFIG) with the REIN_ENV section when
 * there is one, `--max-reach` over its depth. A missing file is an error
 * only when it was asked for (REIN_REACH_CONFIG or `--env`).
 * @internal
 */
export function reachFromFlags(flags: { readonly maxReach?: number; readonly env?: string }): ReachPolicy {
  const named = process.env["REIN_REACH_CONFIG"];
  const configPath = resolve(named || DEFAULT_REACH_CONFIG_PATH);
  const base: ReachPolicyOptions = {};
  if (existsSync(configPath) || Boolean(named) || flags.env !== undefined) {
    const config = loadReachConfig(configPath, { watch: false, reloadSignal: false });
    Object.assign(base, config.limits);
    config.close();
  }
  return new ReachPolicy(flags.maxReach === undefined ? base : { ...base, maxLogicDepth: flags.maxReach });
}
