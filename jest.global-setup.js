/**
 * Runs once before a jest run, in jest's main process: makes the run's
 * scratch directory, where test fixtures keep what the run's files share
 * (the one embedded PostgreSQL server, packages/store-postgres/src/__fixtures__/shared-postgres.ts).
 * Workers start after this and inherit the two variables.
 */
const { mkdtempSync } = require("node:fs");
const { tmpdir } = require("node:os");
const { join } = require("node:path");

module.exports = async function globalSetup() {
  process.env.REIN_TEST_RUN_DIR = mkdtempSync(join(tmpdir(), "rein-test-run-"));
  process.env.REIN_TEST_RUN_PID = String(process.pid);
};
