/**
 * A server in its own process for the tests that hang up on it
 * (hostile-clients.test.ts), run as a tsx child. Its `wait` entry's model
 * waits on its signal and prints "aborted" when that fires; `nap` sleeps
 * the milliseconds it is given. Prints
 * "listening <url>" once bound.
 */
import { serve } from "../serve";
import { createServer } from "../create-server";
import { Sleeper } from "./agents";
import { WaitingProvider, waitingEntries } from "./waiting-provider";

const entries = {
  ...waitingEntries(() => {
    const provider = new WaitingProvider();
    void provider.aborted.then(() => process.stdout.write("aborted\n"));
    return provider;
  }),
  nap: [Sleeper, "sleep"],
} as const;

void serve({ app: createServer({ entries, mintRootBudget: true, heartbeatMs: 20 }) }).then((server) => {
  process.stdout.write(`listening ${server.url}\n`);
  process.on("SIGTERM", () => void server.close().then(() => process.exit(0)));
});
