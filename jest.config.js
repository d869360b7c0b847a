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
  testTimeout: 20000,
};
