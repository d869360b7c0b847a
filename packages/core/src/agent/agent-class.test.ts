import { Agent } from "./agent";
import { isAgentClass } from "./agent-class";

/** A second copy of @rein/core in the same process, as two installed versions (or dist beside src) give. */
function secondCopyOfCore(): typeof import("../index") {
  let copy: typeof import("../index") | undefined;
  jest.isolateModules(() => {
    copy = require("../index") as typeof import("../index");
  });
  return copy!;
}

describe("isAgentClass: Agent classes by a Symbol.for brand, across copies of @rein/core", () => {
  const other = secondCopyOfCore();
  class Mine extends Agent {
    async go(): Promise<string> {
      return "mine";
    }
  }
  class Theirs extends other.Agent {
    async go(): Promise<string> {
      return "theirs";
    }
  }
  class Deeper extends Theirs {}

  it("loads a real second copy: its Agent is another class, and instanceof fails across the copies", () => {
    expect(other.Agent).not.toBe(Agent);
    expect(Theirs.prototype instanceof Agent).toBe(false);
    expect(Mine.prototype instanceof other.Agent).toBe(false);
  });

  it("recognises Agent and its subclasses from either copy, with either copy's isAgentClass (the brand is inherited)", () => {
    for (const check of [isAgentClass, other.isAgentClass]) {
      for (const agentClass of [Agent, other.Agent, Mine, Theirs, Deeper]) expect(check(agentClass)).toBe(true);
    }
  });

  it("rejects factories, plain classes, instances and other values", () => {
    class Plain {
      go(): string {
        return "plain";
      }
    }
    const lookalike = Object.assign(() => undefined, { [Symbol.for("rein.agent.class")]: "yes" });
    for (const value of [() => new Mine(), function factory() {}, Plain, new Mine(), new Theirs(), null, undefined, 42, "Agent", {}, lookalike]) {
      expect(isAgentClass(value)).toBe(false);
    }
  });
});
