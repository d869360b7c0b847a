import { Context } from "../context/context";
import { CancelledError } from "@rein/guard";
import { resumeRun } from "../resumable/resume-run";
import { step } from "../resumable/step";
import { InMemorySessionStore } from "@rein/session";
import { Agent } from "./agent";
import { agentClassId, DuplicateAgentIdError } from "./agent-id";
import * as billing from "./__fixtures__/billing-pipeline";
import * as shipping from "./__fixtures__/shipping-pipeline";

function storeWithSession(): InMemorySessionStore {
  const store = new InMemorySessionStore();
  store.createSession("s");
  return store;
}

test("two classes named Pipeline in different modules record their runs under their own ids and each run is resumed by its own class", async () => {
  const store = storeWithSession();
  const context = Context.forSession(store, "s");
  const billingAgent = new billing.Pipeline({ context });
  const shippingAgent = new shipping.Pipeline({ context });
  expect(billing.Pipeline.name).toBe(shipping.Pipeline.name);

  billing.interrupt.next = true;
  await expect(billingAgent.process("invoice 7")).rejects.toThrow("stopped for the test");
  shipping.interrupt.next = true;
  await expect(shippingAgent.process("parcel 9")).rejects.toThrow("stopped for the test");
  const [billingRun, shippingRun] = store.listRuns();
  expect([billingRun!.name, shippingRun!.name]).toEqual(["billing.Pipeline.process", "shipping.Pipeline.process"]);

  // Both agents are live on the one store: the id, not the shared class name, picks the class.
  expect(await resumeRun(shippingRun!.runId)).toBe("parcel 9 received, finished by shipping");
  expect(await resumeRun(billingRun!.runId)).toBe("invoice 7 received, finished by billing");
  // An agent of the other class refuses the run, naming the id it belongs to.
  billing.interrupt.next = true;
  await expect(billingAgent.process("invoice 8")).rejects.toThrow("stopped for the test");
  const third = store.listRuns().at(-1)!;
  await expect(shippingAgent.resumeRun(third.runId)).rejects.toMatchObject({
    name: "RunNotResumableError",
    message: expect.stringContaining("belongs to billing.Pipeline.process"),
  });
  expect(await billingAgent.resumeRun(third.runId)).toBe("invoice 8 received, finished by billing");
});

test("a class renamed by a minifier (name 't') with a static id still records and resumes its runs by the id", async () => {
  const store = storeWithSession();
  let stop = true;
  class Invoicer extends Agent {
    static id = "billing.Invoicer";
    static methodOptions = { issue: { resumable: true } };
    async issue(customer: string): Promise<string> {
      const draft = await step("draft", async (name: string) => `draft for ${name}`, customer);
      return step("send", async (text: string) => {
        if (stop) {
          stop = false;
          throw new CancelledError("stopped for the test");
        }
        return `${text}, sent`;
      }, draft);
    }
  }
  Object.defineProperty(Invoicer, "name", { value: "t" });
  const invoicer = new Invoicer({ context: Context.forSession(store, "s") });
  await expect(invoicer.issue("Ada")).rejects.toThrow("stopped for the test");
  const run = store.listRuns()[0]!;
  expect(run.name).toBe("billing.Invoicer.issue");
  expect(agentClassId(Invoicer)).toBe("billing.Invoicer");
  expect(await resumeRun(run.runId)).toBe("draft for Ada, sent");
});

test("without a static id the class name is the id (as before), and a subclass does not inherit its parent's id", () => {
  class Plain extends Agent {}
  class Special extends billing.Pipeline {}
  expect(agentClassId(Plain)).toBe("Plain");
  expect(agentClassId(billing.Pipeline)).toBe("billing.Pipeline");
  expect(agentClassId(Special)).toBe("Special");
});

test("two classes declaring one id are a DuplicateAgentIdError naming both, when the second is first used", () => {
  class First extends Agent {
    static id = "shared.Worker";
  }
  class Second extends Agent {
    static id = "shared.Worker";
  }
  new First();
  new First();
  const error = (() => {
    try {
      new Second();
    } catch (caught) {
      return caught;
    }
    return undefined;
  })();
  expect(DuplicateAgentIdError.isInstance(error)).toBe(true);
  expect(error).toMatchObject({
    name: "DuplicateAgentIdError",
    id: "shared.Worker",
    classes: ["First", "Second"],
    message: "two Agent classes have the durable id 'shared.Worker': First and Second — give each its own static id",
  });
});

test("a static id that is not a non-empty string is a TypeError naming the class", () => {
  class Blank extends Agent {
    static id = "";
  }
  class Numbered extends Agent {
    static id = 7 as unknown as string;
  }
  expect(() => new Blank()).toThrow('Invalid static id of Blank: expected a non-empty string without surrounding spaces (e.g. "billing.Pipeline"), got ""');
  expect(() => new Numbered()).toThrow("Invalid static id of Numbered");
});
