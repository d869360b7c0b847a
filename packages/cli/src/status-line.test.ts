import { clock, formatStatusLine, type ReachFigures } from "./status-line";

const reach: ReachFigures = {
  depth: { used: 2, limit: 3 },
  memoryMb: { used: 642.31, limit: 820 },
  zone: "local",
  tokens: { used: 12_400, limit: 50_000 },
  costUsd: { used: 0, limit: null },
  elapsedMs: 12_000,
};

test("the status line of DESIGN §5, figure for figure", () => {
  expect(formatStatusLine({ seq: 3, elapsedMs: 12_000, reach }, { stalled: false, elapsedMs: 12_400 })).toBe(
    "[REACH] Depth 2/3 | Memory 642.3MB/820MB | Zone local | Tokens 12.4k/50k | 00:12",
  );
});

test("no limit shows ∞ (JSON carries it as null); a cost limit adds the cost; stalled is appended", () => {
  const open = { ...reach, tokens: { used: 15, limit: null }, costUsd: { used: 0.0123, limit: 1 } };
  expect(formatStatusLine({ seq: 1, elapsedMs: 0, reach: open }, { stalled: true, elapsedMs: 65_000 })).toBe(
    "[REACH] Depth 2/3 | Memory 642.3MB/820MB | Zone local | Tokens 15/∞ | Cost $0.01/$1.00 | 01:05 | stalled",
  );
});

test("before the child answers: starting; before the first Agent entry: running", () => {
  expect(formatStatusLine(undefined, { stalled: false, elapsedMs: 0 })).toBe("[REACH] starting | 00:00");
  expect(formatStatusLine({ seq: 1, elapsedMs: 5 }, { stalled: false, elapsedMs: 5 })).toBe("[REACH] running | 00:00");
});

test("clock: mm:ss, h:mm:ss past an hour", () => {
  expect([clock(0), clock(59_999), clock(61_000), clock(3_723_000)]).toEqual(["00:00", "00:59", "01:01", "1:02:03"]);
});
