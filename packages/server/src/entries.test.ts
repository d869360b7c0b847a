import { Agent, DuplicateAgentIdError } from "rein";
import { createServer } from "./create-server";
import { checkEntries, isAgentClass } from "./entries";
import { serve } from "./serve";

/**
 * A module's classes built on another copy of `rein` than the server's —
 * what `rein serve` on a `.ts` module in this monorepo gives (the module's
 * `rein` is the sources, the built server's is dist), and two installed
 * versions of @rein/core give a user.
 */
function secondCopyOfRein(): typeof import("rein") {
  let copy: typeof import("rein") | undefined;
  jest.isolateModules(() => {
    copy = require("rein") as typeof import("rein");
  });
  return copy!;
}

describe("entries whose Agent classes come from another copy of rein", () => {
  const other = secondCopyOfRein();
  class Planner extends other.Agent {
    static runtime = new other.Runtime({ provider: new other.ScriptedProvider(["a plan"], { whenExhausted: "repeat-last" }) });
    async plan(task: string): Promise<string> {
      return this.ask(`Plan: ${task}`);
    }
  }

  it("are classes to the server (constructed with new, not called as factories)", () => {
    expect(isAgentClass(Planner)).toBe(true);
    expect(isAgentClass(() => new Planner())).toBe(false);
  });

  it("are checked for their method at construction", () => {
    expect(() => checkEntries({ plan: [Planner, "nope"] })).toThrow("entries.plan: Planner has no method 'nope'");
  });

  it("run: POST { entry } answers completed with the result (it was 'Class constructor Planner cannot be invoked without new')", async () => {
    const app = createServer({ entries: { plan: [Planner, "plan"] }, mintRootBudget: true });
    const response = await app.request("/v1/agent/run", {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ entry: "plan", task: "recursion" }),
    });
    const body = (await response.json()) as { status: string; result: unknown; error?: unknown };
    expect(body).toMatchObject({ status: "completed", result: "a plan" });
    expect(response.status).toBe(200);
  });
});

describe("durable ids of entry classes, checked at start", () => {
  class BillingPipeline extends Agent {
    static id = "billing.Pipeline";
    process(text: string): string {
      return text;
    }
  }
  class OtherPipeline extends Agent {
    static id = "billing.Pipeline";
    process(text: string): string {
      return text.toUpperCase();
    }
  }
  class ShippingPipeline extends Agent {
    static id = "shipping.Pipeline";
    process(text: string): string {
      return text;
    }
  }

  it("two entry classes with one static id: createServer throws DuplicateAgentIdError naming the id and both classes, and serve() rejects before listening", async () => {
    const entries = { bill: [BillingPipeline, "process"], other: [OtherPipeline, "process"] } as const;
    let thrown: unknown;
    try {
      createServer({ entries });
    } catch (error) {
      thrown = error;
    }
    expect(DuplicateAgentIdError.isInstance(thrown)).toBe(true);
    expect((thrown as Error).message).toBe("two Agent classes have the durable id 'billing.Pipeline': BillingPipeline and OtherPipeline — give each its own static id");
    await expect(serve({ entries })).rejects.toThrow("durable id 'billing.Pipeline'");
  });

  it("one class under several entries, and classes with distinct ids, are fine", () => {
    expect(() => checkEntries({ a: [BillingPipeline, "process"], b: [BillingPipeline, "process"], c: [ShippingPipeline, "process"] })).not.toThrow();
  });

  it("an invalid static id is a TypeError at start, not at the first request", () => {
    class Blank extends Agent {
      static id = " ";
      run(): string {
        return "x";
      }
    }
    expect(() => createServer({ entries: { blank: [Blank, "run"] } })).toThrow(/Invalid static id of Blank/);
  });
});
