/**
 * Tiny measurement helpers for the benchmarks: each figure is the median of
 * several rounds, in nanoseconds per operation, measured in the same process
 * run as the figures it is compared with.
 */

const ROUNDS = 7;

/** Median ns/op of a synchronous operation. */
export function measureSync(operation: () => unknown, iterations: number): number {
  for (let i = 0; i < Math.min(iterations, 10_000); i++) operation(); // warm-up
  const rounds: number[] = [];
  for (let round = 0; round < ROUNDS; round++) {
    const start = process.hrtime.bigint();
    for (let i = 0; i < iterations; i++) operation();
    rounds.push(Number(process.hrtime.bigint() - start) / iterations);
  }
  return median(rounds);
}

/** Median ns/op of an asynchronous operation, awaited one after another. */
export async function measureAsync(operation: () => Promise<unknown>, iterations: number): Promise<number> {
  for (let i = 0; i < Math.min(iterations, 5_000); i++) await operation();
  const rounds: number[] = [];
  for (let round = 0; round < ROUNDS; round++) {
    const start = process.hrtime.bigint();
    for (let i = 0; i < iterations; i++) await operation();
    rounds.push(Number(process.hrtime.bigint() - start) / iterations);
  }
  return median(rounds);
}

/** Min, median (the middle value; the upper middle of an even count) and max: how every bench reports a spread. */
export function minMedianMax(values: readonly number[]): { min: number; median: number; max: number } {
  const sorted = [...values].sort((a, b) => a - b);
  return { min: sorted[0]!, median: sorted[Math.floor(sorted.length / 2)]!, max: sorted[sorted.length - 1]! };
}

/** The median of {@link minMedianMax}. */
export function median(values: readonly number[]): number {
  return minMedianMax(values).median;
}

/** Formats ns with one decimal. */
export function ns(value: number): string {
  return `${value.toFixed(1)} ns`;
}

/** Prints rows as an aligned table. */
export function printTable(rows: string[][]): void {
  const widths = rows[0].map((_, column) => Math.max(...rows.map((row) => row[column].length)));
  for (const row of rows) console.log(row.map((cell, column) => cell.padEnd(widths[column])).join("  "));
}
