/** A resumed run replays what a finished step saved — not what the run later did to the value it got back. */
import { Agent } from "../agent/agent";
import { Context } from "../context/context";
import { InMemorySessionStore } from "@rein/session";
import { step } from "./step";
import { resumeRun } from "./resume-run";

test("a step result the run changed in place is replayed as saved by every later resume (in-memory store, as on a file)", async () => {
  const store = new InMemorySessionStore();
  store.createSession("s");
  const seen: number[][] = [];
  let attempts = 0;
  class Job extends Agent {
    static methodOptions = { go: { resumable: true } };
    async go(): Promise<number> {
      const list = await step("fetch", async () => ({ items: [1, 2] }));
      seen.push([...list.items]);
      list.items.push(99); // the run's own working copy
      await step("flaky", async () => {
        if (++attempts < 3) throw new Error("transient");
      });
      return list.items.length;
    }
  }
  const agent = new Job({ context: Context.forSession(store, "s") });
  await expect(agent.go()).rejects.toThrow("transient");
  const runId = store.listRuns()[0]!.runId;
  await expect(resumeRun(runId)).rejects.toThrow("transient");
  await expect(resumeRun(runId)).resolves.toBe(3);
  expect(seen).toEqual([[1, 2], [1, 2], [1, 2]]);
});
