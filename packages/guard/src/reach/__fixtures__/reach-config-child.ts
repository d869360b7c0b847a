/**
 * Child process of reach-config.test.ts: loads the config named by argv[2]
 * (file watching on, SIGUSR1 on), prints "ready <depth>", and on each reload
 * prints "reloaded <depth>". Its only own handle is a ref'd timer, cleared on
 * the first reload: if the process then exits by itself, the policy's
 * watchers, timer and signal listener did not keep it alive.
 */
import { loadReachConfig } from "../reach-config";

const keepAlive = setTimeout(() => {
  process.stdout.write("gave up\n");
  process.exit(2);
}, 15_000);

const policy = loadReachConfig(process.argv[2], {
  debounceMs: 20,
  watch: process.argv[3] !== "no-watch",
  onReload: (limits) => {
    process.stdout.write(`reloaded ${limits.maxLogicDepth}\n`);
    clearTimeout(keepAlive);
  },
});
process.stdout.write(`ready ${policy.limits.maxLogicDepth}\n`);
