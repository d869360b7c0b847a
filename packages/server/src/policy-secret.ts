/**
 * @internal Whether `REIN_POLICY_SECRET` names a secret (comma-separated
 * during a rotation; read on every call, as the header codec reads it).
 */
export function policySecretSet(): boolean {
  return (process.env.REIN_POLICY_SECRET ?? "").split(",").some((secret) => secret.trim() !== "");
}
