/**
 * A function that keeps calling itself, the way a model does when the tool
 * list contains the very agent it is running inside. The guard stops it at
 * depth 5; at every level we print the call chain and the situational prefix
 * the model would see first in its user turn.
 *
 * Run: pnpm demo
 */
import { currentChain, RecursionError, runInFrame, situationalPrefix, type Frame } from "@rein/guard";

const wikiAgent: Frame = { key: "example:wiki_agent", name: "wiki_agent", kind: "agent" };
const WIKI_DOC = "Research a topic on the wiki and return a short summary.";

/** Runs the runaway function and returns what it printed, line by line. */
export function runRecursionGuardDemo(print: (line: string) => void = console.log): { bodies: number; error: unknown } {
  let bodies = 0;
  const callWikiAgent = (topic: string): string =>
    runInFrame(wikiAgent, () => {
      bodies++;
      const chain = currentChain().map((frame) => frame.name);
      print(`depth ${chain.length}: ${chain.join(" → ")}`);
      if (chain.length === 5) {
        print("");
        print("The model, at depth 5, sees this first in its user turn:");
        print("----");
        print(situationalPrefix(wikiAgent.name, WIKI_DOC, { callPath: chain }));
        print("----");
        print("It ignores the guidance and calls wiki_agent once more…");
      }
      // A mindless model: the task matches wiki_agent's own description, so it calls wiki_agent.
      return callWikiAgent(topic);
    });

  let error: unknown;
  try {
    callWikiAgent("recursion");
  } catch (caught) {
    error = caught;
  }
  print("");
  if (RecursionError.isInstance(error)) {
    print(`Stopped: ${error.name}: ${error.message}`);
    print(`The body ran ${bodies} times (limit ${error.limit}); the call chain is empty again: [${currentChain().join(", ")}]`);
  } else {
    print(`Unexpected outcome: ${String(error)}`);
  }
  return { bodies, error };
}

if (require.main === module) runRecursionGuardDemo();
