/** Runs every benchmark in sequence: `pnpm bench`. Each prints ratios measured in its own run. */
import { benchGuardOverhead } from "./guard-overhead";
import { benchLoopDetector } from "./loop-detector";
import { benchReach } from "./reach";
import { benchResumable } from "./resumable";
import { benchScopedCall } from "./scoped-call";
import { benchServer } from "./server";
import { benchSessionStoreOpenClose, benchSessionStoreOpenCpu } from "./session-store-open-close";
import { benchSessionWriter } from "./session-writer";
import { benchStartup } from "./startup";
import { benchTurnOverhead } from "./turn-overhead";

async function main(): Promise<void> {
  await benchGuardOverhead();
  await benchScopedCall();
  await benchTurnOverhead();
  await benchReach();
  await benchResumable();
  await benchServer();
  benchLoopDetector();
  benchSessionWriter();
  benchSessionStoreOpenClose();
  benchSessionStoreOpenCpu();
  await benchStartup();
  // The session-store bench is a script of its own (it builds SQLite files of up to 100k nodes).
  require("./session-store");
}

void main();
