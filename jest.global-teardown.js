/**
 * Runs once after a jest run: stops the shared embedded PostgreSQL server if a
 * test file started one (SIGTERM; the server removes its data directory), and
 * removes the run's scratch directory. See jest.global-setup.js.
 */
const { existsSync, readFileSync, rmSync } = require("node:fs");
const { join } = require("node:path");

const alive = (pid) => {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
};

module.exports = async function globalTeardown() {
  const runDir = process.env.REIN_TEST_RUN_DIR;
  if (runDir === undefined || runDir === "") return;
  const recorded = join(runDir, "postgres.json");
  if (existsSync(recorded)) {
    const { pid } = JSON.parse(readFileSync(recorded, "utf8"));
    if (alive(pid)) process.kill(pid, "SIGTERM");
    // Its data directory is removed on the way out; wait for that, up to a minute on a loaded machine.
    for (let waited = 0; alive(pid) && waited < 60_000; waited += 100) await new Promise((done) => setTimeout(done, 100));
  }
  rmSync(runDir, { recursive: true, force: true });
};
