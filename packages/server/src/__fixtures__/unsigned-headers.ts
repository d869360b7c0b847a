/**
 * Runs the calling test file with `REIN_POLICY_SECRET` unset (unsigned
 * `X-Agent-Policy` headers), restoring it afterwards.
 */
export function withUnsignedPolicyHeaders(): void {
  let saved: string | undefined;
  beforeAll(() => {
    saved = process.env.REIN_POLICY_SECRET;
    delete process.env.REIN_POLICY_SECRET;
  });
  afterAll(() => {
    if (saved !== undefined) process.env.REIN_POLICY_SECRET = saved;
  });
}
