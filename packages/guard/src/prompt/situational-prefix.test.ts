import { situationalPrefix } from "./situational-prefix";

describe("situationalPrefix", () => {
  it("names the function, says do NOT call it and why (recursion)", () => {
    const text = situationalPrefix("wiki_agent", "Research a topic.");
    expect(text).toContain("INSIDE the function `wiki_agent`");
    expect(text).toContain("do NOT call it");
    expect(text).toContain("recursion");
    expect(text).toContain("lower-level tools");
  });

  it("puts the job description after the warning", () => {
    const text = situationalPrefix("wiki_agent", "Research a topic on the wiki.");
    const warning = text.indexOf("do NOT call it");
    const job = text.indexOf("Research a topic on the wiki.");
    expect(warning).toBeGreaterThanOrEqual(0);
    expect(job).toBeGreaterThan(warning);
  });

  it.each([undefined, "", "   "])("adds no job line when the description is %p", (doc) => {
    const text = situationalPrefix("wiki_agent", doc);
    expect(text).not.toMatch(/job/i);
    expect(text.split("\n")).toHaveLength(3);
  });

  it("adds call path, position and output contract lines only when given", () => {
    const bare = situationalPrefix("f", "Do f.");
    expect(bare).not.toContain("Call path");
    expect(bare).not.toContain("Position");
    expect(bare).not.toContain("Output contract");

    const full = situationalPrefix("C", "Do C.", {
      callPath: ["A", "B", "C"],
      position: "step 2 of 4",
      outputContract: "a JSON object { title }",
    });
    expect(full).toContain("Call path: A → B → C");
    expect(full).toContain("Position: step 2 of 4");
    expect(full).toContain("Output contract: a JSON object { title }");
    expect(situationalPrefix("C", "", { callPath: "A → C" })).toContain("Call path: A → C");
  });

  it("names the tool the function is listed as, when that name differs", () => {
    const text = situationalPrefix("WikiAgent.wiki_agent", "Research.", { toolName: "wiki_agent" });
    expect(text).toContain("INSIDE the function `WikiAgent.wiki_agent`");
    expect(text).toContain("may include it (as the tool `wiki_agent`) — do NOT call it");
    expect(situationalPrefix("f", "", { toolName: "f" })).toContain("may include `f` itself");
  });

  it("is deterministic, so identical situations render identical bytes", () => {
    const extras = { callPath: ["A", "B"] };
    expect(situationalPrefix("B", "Do B.", extras)).toBe(situationalPrefix("B", "Do B.", extras));
  });
});
