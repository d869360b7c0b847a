import { ScriptedProvider } from "@rein/core";
import { runResearcher } from "./researcher";

describe("examples/researcher", () => {
  it("answers through the model and records prepare, research and the model request", async () => {
    const model = new ScriptedProvider(["The Nile."]);
    const lines: string[] = [];
    const { answer, graph } = await runResearcher({ provider: model, print: (line) => lines.push(line) });
    expect(answer).toBe("The Nile.");
    expect(model.requests[0].system).toBe("Return a short, factual answer.");
    const userTurn = JSON.stringify(model.requests[0].messages[0].content);
    expect(userTurn).toContain("INSIDE the function `Researcher.research`");
    expect(userTurn).toContain("a curious ten-year-old");
    expect(userTurn).toContain("Which river is the longest?");
    expect(graph).toContain("Researcher.research");
    expect(graph).toContain("Researcher.prepare");
    expect(lines.join("\n")).toContain("answer: The Nile.");
  });
});
