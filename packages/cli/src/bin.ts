#!/usr/bin/env node
import { main } from "./cli";
import { processIo } from "./cli-io";

main(process.argv.slice(2), processIo()).then(
  (code) => {
    process.exitCode = code;
  },
  (error: unknown) => {
    process.stderr.write(`rein: ${error instanceof Error ? error.message : String(error)}\n`);
    process.exitCode = 1;
  },
);
