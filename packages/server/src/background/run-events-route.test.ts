/**
 * What `GET /v1/runs/:id/events` and `GET /v1/runs/:id` hold back, without
 * a database: a client that reads nothing does not make the server read a
 * long run's whole log into memory, and a run that ran out of retries on a
 * store fault does not show the store's own message (it names the host).
 */
import { InMemorySessionStore } from "rein";
import { createServer } from "../create-server";
import { entries } from "../__fixtures__/agents";
import type { BackgroundJob, BackgroundQueue, BackgroundRunRecord } from "./background-queue";
import type { RunChannel, StoredRunEvent } from "./run-channel";
import { errorOf } from "./pg-boss-queue";

const RUN_ID = "3d6f0a52-8c1e-4b7a-9f20-5e4c1d2b7a90";

/** A queue whose one run is `record`, with a channel serving `log` and counting what it served. */
function fakeQueue(record: Omit<BackgroundRunRecord, "job">, log: StoredRunEvent[]) {
  const counted = { served: 0 };
  const channel: RunChannel = {
    append: async () => undefined,
    read: async (_runId, afterSeq, limit = 500) => {
      const batch = log.filter((item) => item.seq > afterSeq).slice(0, limit);
      counted.served += batch.length;
      return batch;
    },
    follow: () => () => undefined,
    control: async () => true,
    controlsOf: async () => [],
    onControl: () => () => undefined,
    close: async () => undefined,
  };
  const job: BackgroundJob = { runId: RUN_ID, entry: "research", args: ["x"], sessionId: "s1", storedSessionId: "s1", owner: "", budget: { depth: 2 } };
  const queue: BackgroundQueue = { send: async () => undefined, get: async () => ({ job, ...record }), work: async () => undefined, stop: async () => undefined, channel };
  return { queue, counted };
}

it("replaying a long run to a client that reads nothing reads ahead at most two batches of its log", async () => {
  const log = Array.from({ length: 10_000 }, (_, index) => ({ seq: index + 1, event: { type: "text-delta", step: 1, text: `chunk ${index} `.repeat(20) } }));
  const { queue, counted } = fakeQueue({ state: "running" }, log);
  const app = createServer({ entries, store: new InMemorySessionStore(), queue, onInternalError: () => undefined });
  const response = await app.request(`/v1/runs/${RUN_ID}/events`);
  expect(response.status).toBe(200);
  // Nothing is read from the body: wait until the server stops asking the channel for more.
  let seen = -1;
  for (let quiet = 0; quiet < 10; ) {
    await new Promise((resolve) => setTimeout(resolve, 20));
    if (counted.served === seen) quiet++;
    else (quiet = 0), (seen = counted.served);
  }
  expect(counted.served).toBeGreaterThan(0);
  expect(counted.served).toBeLessThanOrEqual(1_000);
  // A client that reads on gets every event, in order.
  const reader = response.body!.getReader();
  const decoder = new TextDecoder();
  let text = "";
  while ((text.match(/^id: /gm)?.length ?? 0) < 1_500) {
    const { value, done } = await reader.read();
    if (done) break;
    text += decoder.decode(value, { stream: true });
  }
  await reader.cancel();
  const ids = [...text.matchAll(/^id: (\d+)$/gm)].map((match) => Number(match[1]));
  expect(ids.slice(0, 1_500)).toEqual(Array.from({ length: 1_500 }, (_, index) => index + 1));
});

it("a run out of retries on a store fault is shown with a sentence without the database's address (PgBossQueue errorOf)", async () => {
  const fault = errorOf({ name: "PostgresConnectionError", message: "Cannot reach PostgreSQL for session store 'postgres://db.internal.example:5432/app (schema rein)': connect ECONNREFUSED 10.0.0.5:5432" });
  expect(fault.name).toBe("PostgresConnectionError");
  expect(fault.message).not.toMatch(/db\.internal|10\.0\.0\.5|5432/);
  expect(fault.message).toMatch(/session store was unavailable/);
  // Any other failure keeps its own message.
  expect(errorOf({ name: "TypeError", message: "entry 'x': the factory's object has no method 'y'" })).toEqual({ name: "TypeError", message: "entry 'x': the factory's object has no method 'y'" });
});
