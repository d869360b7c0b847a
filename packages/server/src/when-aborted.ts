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

/**
 * {@link whenAborted} for several signals: runs `react` once, when the first
 * of them aborts (at once when one already has), and stops listening to all
 * of them then or when the returned function is called. A stream that ends
 * when its client hangs up or its server closes listens through here.
 * @internal
 */
export function whenAnyAborted(signals: readonly AbortSignal[], react: () => void): () => void {
  const leaves: Array<() => void> = [];
  let done = false;
  const leave = () => {
    done = true;
    for (const stop of leaves.splice(0)) stop();
  };
  for (const signal of signals) {
    if (done) break;
    leaves.push(
      whenAborted(signal, () => {
        if (done) return;
        leave();
        react();
      }),
    );
  }
  if (done) leave();
  return leave;
}
