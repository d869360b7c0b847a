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
});
