/**
 * Finds a period of two or more keys (at least two distinct) that the tail of
 * `keys` repeats `repeats` times in a row, ending at the last key. Returns the
 * period's length, or 0 when there is none. Only called when the last key
 * already occurs `repeats` times, so ordinary calls never pay for it.
 */
export function findTailCycle(keys: readonly string[], repeats: number): number {
  const n = keys.length;
  const last = keys[n - 1];
  for (let period = 2; period * repeats <= n; period++) {
    if (keys[n - 1 - period] !== last) continue;
    let periodic = true;
    for (let j = n - 1; j >= n - period * (repeats - 1); j--) {
      if (keys[j] !== keys[j - period]) {
        periodic = false;
        break;
      }
    }
    if (!periodic) continue;
    for (let j = n - period; j < n - 1; j++) {
      if (keys[j] !== last) return period;
    }
  }
  return 0;
}
