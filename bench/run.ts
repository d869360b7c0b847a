/** Runs every benchmark in sequence: `pnpm bench`. */
import { benchGuardOverhead } from "./guard-overhead";

async function main(): Promise<void> {
  await benchGuardOverhead();
}

void main();
