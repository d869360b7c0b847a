/** Jest runs every package's tests from source: no build step first. */
/** @type {import('jest').Config} */
module.exports = {
  testEnvironment: "node",
  roots: ["<rootDir>/packages", "<rootDir>/examples"],
  testMatch: ["**/*.test.ts"],
  moduleNameMapper: {
    "^@rein/([a-z-]+)$": "<rootDir>/packages/$1/src/index.ts",
    "^rein$": "<rootDir>/packages/rein/src/index.ts",
  },
  transform: {
    "^.+\\.ts$": ["ts-jest", { tsconfig: "<rootDir>/tsconfig.test.json" }],
  },
  // Sized for a loaded 2-core machine (tests run 5-6x slower there than when quiet); no test asserts elapsed time.
  testTimeout: 60000,
};
