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

test("with guard figures: the deepest recursion against its ceiling, loop warnings (blocks once there are any) and steps of maxSteps, after Depth", () => {
  const guards = { recursion: { used: 4, limit: 5, name: "WikiAgent.wiki_agent" }, loops: { warnings: 0, blocks: 0 }, steps: { used: 4, limit: 100 } };
  expect(formatStatusLine({ seq: 3, elapsedMs: 3_000, reach, guards }, { stalled: false, elapsedMs: 3_000 })).toBe(
    "[REACH] Depth 2/3 | Recursion 4/5 WikiAgent.wiki_agent | Loop warnings 0 | Steps 4/100 | Memory 642.3MB/820MB | Zone local | Tokens 12.4k/50k | 00:03",
  );
  const looping = { recursion: { used: 0, limit: 5, name: "" }, loops: { warnings: 2, blocks: 1 }, steps: { used: 12, limit: null } };
  expect(formatStatusLine({ seq: 4, elapsedMs: 0, reach, guards: looping }, { stalled: false, elapsedMs: 0 })).toBe(
    "[REACH] Depth 2/3 | Recursion 0/5 | Loop warnings 2, blocks 1 | Steps 12/∞ | Memory 642.3MB/820MB | Zone local | Tokens 12.4k/50k | 00:00",
  );
});

test("before the child answers: starting; before the first Agent entry: running", () => {
  expect(formatStatusLine(undefined, { stalled: false, elapsedMs: 0 })).toBe("[REACH] starting | 00:00");
  expect(formatStatusLine({ seq: 1, elapsedMs: 5 }, { stalled: false, elapsedMs: 5 })).toBe("[REACH] running | 00:00");
});

test("clock: mm:ss, h:mm:ss past an hour", () => {
  expect([clock(0), clock(59_999), clock(61_000), clock(3_723_000)]).toEqual(["00:00", "00:59", "01:01", "1:02:03"]);
});
