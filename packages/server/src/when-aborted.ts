/**
 * Runs `react` once `signal` aborts, or at once when it already has: a
 * listener added to an aborted signal never fires, so a cancel or a
 * hang-up that came while a run was still starting would be lost. Every
 * reaction of the server to a run's or a request's signal goes through
 * here. Returns the function that stops listening.
 * @internal
 */
export function whenAborted(signal: AbortSignal, react: () => void): () => void {
  if (signal.aborted) {
    react();
    return () => undefined;
  }
  signal.addEventListener("abort", react, { once: true });
  return () => signal.removeEventListener("abort", react);
}
