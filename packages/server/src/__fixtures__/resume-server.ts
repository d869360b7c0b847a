/**
 * A server on a SQLite file with the resumable pipeline entry, run by
 * resume-runs.test.ts as a tsx child process (STORE, optionally
 * PIPELINE_HANG=1). Prints "listening <url>", then one JSON line with what
 * it resumed on start and which pipeline steps ran in this process.
 */
import { SessionStore } from "rein";
import { serve } from "../serve";
import { pipelineCalls, resumableEntries } from "./agents";

const store = new SessionStore({ path: process.env["STORE"]!, shutdownFlush: false });
void serve({ entries: resumableEntries, store, mintRootBudget: true }).then(async (server) => {
  process.stdout.write(`listening ${server.url}\n`);
  const report = await server.resumed;
  process.stdout.write(`${JSON.stringify({ report, calls: pipelineCalls })}\n`);
});
