/**
 * Test-only: each test starts with no origin list and no policy secret
 * (neither `setReachOrigins` nor `REIN_REACH_ORIGINS` / `REIN_POLICY_SECRET`),
 * and the process's own values come back after it. Used by guard's
 * reach-origins.test.ts and core's reach-fetch-origins.test.ts.
 * @internal
 */
import { setReachOrigins } from "../reach-origins";

const NAMES = ["REIN_REACH_ORIGINS", "REIN_POLICY_SECRET"] as const;

/** Declares the beforeEach / afterEach that give every test of the file a clean allow list. */
export function withCleanReachOrigins(): void {
  const saved = new Map<string, string | undefined>();
  beforeEach(() => {
    for (const name of NAMES) {
      saved.set(name, process.env[name]);
      delete process.env[name];
    }
    setReachOrigins(undefined);
  });
  afterEach(() => {
    setReachOrigins(undefined);
    for (const name of NAMES) {
      const value = saved.get(name);
      if (value === undefined) delete process.env[name];
      else process.env[name] = value;
    }
  });
}
