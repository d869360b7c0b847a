import { randomIdText } from "@rein/session";
import { newNodeId } from "./call-scope";

// Moved from the session store's fault tests when the stores left core for @rein/session: newNodeId is core's.
describe("node ids", () => {
  test("newNodeId: a 128-bit random prefix per process, then a counter", () => {
    const ids = Array.from({ length: 10_000 }, () => newNodeId());
    expect(new Set(ids).size).toBe(10_000);
    const prefix = ids[0]!.slice(0, 22);
    expect(ids[0]).toMatch(/^[A-Za-z0-9_-]{22}-[0-9a-z]+$/);
    expect(Buffer.from(prefix, "base64url")).toHaveLength(16);
    expect(ids.every((id) => id.startsWith(`${prefix}-`))).toBe(true);
  });

  test("an id never begins with '-' (a command line would take it for an option): a draw that would is drawn again", () => {
    // 0xF8 encodes to base64url '-' first (62 << 2); the second draw is used.
    const draws = [Buffer.alloc(16, 0xf8), Buffer.alloc(16, 0x41)];
    const text = randomIdText(() => draws.shift()!);
    expect(text).toBe(Buffer.alloc(16, 0x41).toString("base64url"));
    expect(draws).toHaveLength(0);
    expect(Buffer.alloc(16, 0xf8).toString("base64url").startsWith("-")).toBe(true);
    // The process's prefix, as every node id of this process carries it.
    expect(newNodeId().startsWith("-")).toBe(false);
  });
});
