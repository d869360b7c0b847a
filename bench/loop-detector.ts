/**
 * Cost of tool-loop detection per tool call (detect + recordCall +
 * recordOutcome, the window full at 30 records) against a raw sha256 of the
 * same result bytes, for 100-byte, 10 KB and 1 MB results, all measured in
 * this one process run. Two result shapes: the bare string, and a command
 * result object holding it beside volatile fields (pid, durationMs).
 *
 * Target: within 1.5× the raw hash for 10 KB and larger results.
 * Run: pnpm exec tsx --tsconfig tsconfig.test.json bench/loop-detector.ts
 */
import { createHash } from "node:crypto";
import { ToolLoopDetector } from "@rein/guard";
import { median, ns, printTable } from "./measure";

const SIZES = [
  { label: "100 B", bytes: 100, iterations: 20_000 },
  { label: "10 KB", bytes: 10 * 1024, iterations: 3_000 },
  { label: "1 MB", bytes: 1024 * 1024, iterations: 30 },
];
const TARGET_RATIO = 1.5;
/** Argument patterns the simulated model cycles through, so the window holds several. */
const PATTERNS = 7;

const ROUNDS = 15;

/**
 * Median ns/op of `operation` and of `baseline`, measured in alternating
 * rounds, and the median of the per-round ratios. This machine is shared:
 * alternating keeps both sides under the same load, which separate runs of
 * `measureSync` do not.
 */
function measurePaired(
  baseline: () => unknown,
  operation: () => unknown,
  iterations: number,
): { baseline: number; operation: number; ratio: number } {
  const time = (fn: () => unknown): number => {
    const start = process.hrtime.bigint();
    for (let i = 0; i < iterations; i++) fn();
    return Number(process.hrtime.bigint() - start) / iterations;
  };
  time(baseline);
  time(operation);
  const baselines: number[] = [];
  const operations: number[] = [];
  const ratios: number[] = [];
  for (let round = 0; round < ROUNDS; round++) {
    const base = time(baseline);
    const measured = time(operation);
    baselines.push(base);
    operations.push(measured);
    ratios.push(measured / base);
  }
  return { baseline: median(baselines), operation: median(operations), ratio: median(ratios) };
}


function payloadOf(bytes: number): string {
  const line = "lorem ipsum dolor sit amet, consectetur adipiscing elit 0123456789\n";
  return line.repeat(Math.ceil(bytes / line.length)).slice(0, bytes);
}

function rawSha256(payload: string): string {
  return createHash("sha256").update(payload).digest("hex");
}

/** One simulated tool call per invocation, as the runtime makes it. */
function detectorCall(resultOf: (i: number) => unknown): () => unknown {
  const detector = new ToolLoopDetector({ enabled: true });
  const params = Array.from({ length: PATTERNS }, (_, i) => ({ cmd: "cat", path: `logs/${i}.log`, tail: 200 }));
  let i = 0;
  return () => {
    const args = params[i % PATTERNS];
    const result = resultOf(i++);
    const verdict = detector.detect("exec", args, { runId: "bench" });
    detector.recordCall({ toolName: "exec", params: args, runId: "bench" });
    detector.recordOutcome({ toolName: "exec", params: args, runId: "bench", result });
    return verdict;
  };
}

export function benchLoopDetector(): { ratios: Record<string, number> } {
  console.log("\n== loop detector: detect + recordCall + recordOutcome per call (history 30) vs raw sha256 of the result ==");
  const rows = [["result", "raw sha256", "string result", "ratio", "command object", "ratio", "target"]];
  const ratios: Record<string, number> = {};
  for (const { label, bytes, iterations } of SIZES) {
    const payload = payloadOf(bytes);
    const raw = () => rawSha256(payload);
    const asString = measurePaired(raw, detectorCall(() => payload), iterations);
    const asObject = measurePaired(
      raw,
      detectorCall((i) => ({ status: "completed", exitCode: 0, stdout: payload, durationMs: 12 + (i % 5), pid: 4000 + i })),
      iterations,
    );
    const stringRatio = asString.ratio;
    const objectRatio = asObject.ratio;
    ratios[`${label} string`] = stringRatio;
    ratios[`${label} object`] = objectRatio;
    const target = bytes >= 10 * 1024 ? (Math.max(stringRatio, objectRatio) <= TARGET_RATIO ? "met" : "MISSED") : "n/a";
    rows.push([
      label,
      ns(median([asString.baseline, asObject.baseline])),
      ns(asString.operation),
      `${stringRatio.toFixed(2)}×`,
      ns(asObject.operation),
      `${objectRatio.toFixed(2)}×`,
      target,
    ]);
  }
  printTable(rows);
  console.log(`target: within ${TARGET_RATIO}× the raw hash for 10 KB+ results`);
  return { ratios };
}

if (require.main === module) benchLoopDetector();
