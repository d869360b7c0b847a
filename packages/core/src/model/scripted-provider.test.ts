import type { ModelRequest } from "./model-provider";
import { ScriptedProvider } from "./scripted-provider";

const request = (text: string): ModelRequest => ({ system: "", messages: [{ role: "user", content: [{ type: "text", text }] }], tools: [] });

describe("ScriptedProvider request recording", () => {
  it("by default keeps a deep copy of every request", async () => {
    const model = new ScriptedProvider(["a", "b"]);
    const first = request("one");
    await model.complete(first);
    await model.complete(request("two"));
    (first.messages as unknown as unknown[]).length = 0;
    expect(model.requests.map((r) => r.messages[0]?.content[0])).toEqual([
      { type: "text", text: "one" },
      { type: "text", text: "two" },
    ]);
    expect(model.requestCount).toBe(2);
  });

  it("with recordRequests: false keeps none, still counts and still plays turns in order", async () => {
    const indexes: number[] = [];
    const model = new ScriptedProvider(
      [
        (_request, index) => {
          indexes.push(index);
          return `turn ${index}`;
        },
      ],
      { whenExhausted: "repeat-last", recordRequests: false },
    );
    const clone = jest.spyOn(globalThis, "structuredClone");
    try {
      for (let i = 0; i < 3; i++) await model.complete(request(`r${i}`));
    } finally {
      clone.mockRestore();
    }
    expect(clone).not.toHaveBeenCalled();
    expect(model.requests).toEqual([]);
    expect(model.requestCount).toBe(3);
    expect(indexes).toEqual([0, 1, 2]);
  });

  it("exhaustion is still reported by request number", async () => {
    const model = new ScriptedProvider(["only"], { recordRequests: false });
    await model.complete(request("x"));
    await expect(model.complete(request("y"))).rejects.toThrow("ScriptedProvider has no turn for request 2 (it was given 1)");
  });
});
