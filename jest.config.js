/** Jest runs every package's tests from source: no build step first. */
const { cpus } = require("node:os");

/** @type {import('jest').Config} */
module.exports = {
  // Two workers at least: most test files wait on child processes, sockets and databases, so two run well on two
  // cores (jest's default there is one: cores - 1). Measured on a fresh clone at load 7-10: 19m25s with one worker,
  // 12m42s with two.
  maxWorkers: Math.max(2, cpus().length - 1),
  testEnvironment: "node",
  roots: ["<rootDir>/packages", "<rootDir>/examples"],
  testMatch: ["**/*.test.ts"],
  moduleNameMapper: {
    "^@rein/([a-z-]+)$": "<rootDir>/packages/$1/src/index.ts",
    "^rein$": "<rootDir>/packages/rein/src/index.ts",
  },
  // esbuild, or TypeScript for a file with decorators (jest.transform.js); types are checked by `pnpm typecheck`.
  transform: {
    "^.+\\.ts$": "<rootDir>/jest.transform.js",
  },
  // A scratch directory per run (REIN_TEST_RUN_DIR) where the test files share one embedded PostgreSQL server, each
  // file with a database of its own (store-postgres/src/__fixtures__/shared-postgres.ts); the teardown stops it.
  globalSetup: "<rootDir>/jest.global-setup.js",
  // Each file's AsyncLocalStorage instances are disabled after it, so later files in a worker do not pay for them.
  setupFilesAfterEnv: ["<rootDir>/jest.async-storage.js"],
  globalTeardown: "<rootDir>/jest.global-teardown.js",
  // Sized for a loaded 2-core machine (tests run 5-6x slower there than when quiet); no test asserts elapsed time.
  testTimeout: 60000,
};
