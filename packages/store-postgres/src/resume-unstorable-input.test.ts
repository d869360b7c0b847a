/**
 * A resumable run whose finished step's argument holds a NUL or a lone
 * surrogate resumes on PostgreSQL (which keeps U+FFFD in their place): the
 * saved input and the new one are compared as the database keeps text
 * (found by an attack review, 2026-12-03: it paused for good as "changed").
 */
import { Agent, Context, InterruptedError, step } from "@rein/core";
import { PostgresSessionStore } from "./postgres-session-store";
import { freshSchemaName, startEmbeddedPostgres, type EmbeddedPostgresServer } from "./__fixtures__/embedded-postgres";

let server: EmbeddedPostgresServer | undefined;
beforeAll(async () => { server = await startEmbeddedPostgres(); }, 60_000);
afterAll(async () => { await server?.stop(); });

const calls: string[] = [];
let failOnce = true;
let record = "";

class Importer extends Agent {
  static methodOptions = { run: { resumable: true } };
  async run(): Promise<string> {
    // `record` comes from outside the run (a file read, a constant): not from a saved step.
    const length = await step("parse", async (text: string) => (calls.push("parse"), text.length), record);
    return step("save", async (n: number) => {
      calls.push("save");
      if (failOnce) { failOnce = false; throw new InterruptedError("deploy"); }
      return `saved ${n}`;
    }, length);
  }
}

test.each([["a NUL", "header\u0000body"], ["a lone surrogate", "header\ud800body"]])(
  "Postgres: a run whose finished step's argument holds %s resumes", async (_, text) => {
  const store = new PostgresSessionStore({ connectionString: server!.connectionString, schema: freshSchemaName(), shutdownFlush: false });
  try {
    store.createSession("s");
    const context = Context.forSession(store, "s");
    record = text; failOnce = true; calls.length = 0;
    await expect(new Importer({ context }).run()).rejects.toThrow("deploy");
    const runId = store.listRuns().at(-1)!.runId;
    calls.length = 0;
    const result = await new Importer({ context }).resumeRun(runId).catch((e: unknown) => e);
    expect(String(result)).toBe("saved 11");
    expect(calls).toEqual(["save"]);
  } finally {
    store.close();
  }
});
