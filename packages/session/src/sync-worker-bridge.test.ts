import { Worker } from "node:worker_threads";
import { SyncWorkerBridge, WORKER_SIGNAL, type WorkerFailure } from "./sync-worker-bridge";

/**
 * A toy worker on the event-loop side of the protocol (as the Postgres
 * store's): `echo` answers its argument, `fail` reports a failure, `slow`
 * answers after a timer, `crash` ends the thread without answering,
 * `fail-to-start` sets the ended flag and ends, `close` answers and closes
 * its ports.
 */
const TOY_WORKER = `
const { workerData: data } = require("node:worker_threads");
const signal = new Int32Array(data.signal);
const REPLIES = ${WORKER_SIGNAL.replies};
function answer(request, reply) {
  if (request.id === 0) {
    data.port.postMessage(reply);
    Atomics.add(signal, REPLIES, 1);
    Atomics.notify(signal, REPLIES);
  } else {
    data.asyncPort.postMessage(reply);
  }
}
data.port.on("message", (request) => {
  const [value] = request.args;
  if (request.op === "echo") answer(request, { id: request.id, value });
  else if (request.op === "fail") answer(request, { id: request.id, failure: { kind: "toy", message: "toy failure: " + value } });
  else if (request.op === "slow") setTimeout(() => answer(request, { id: request.id, value }), 20);
  else if (request.op === "crash") process.exit(3);
  else if (request.op === "fail-to-start") {
    // What the stores' worker sources do when their code throws: say so through the signal, then end.
    Atomics.store(signal, ${WORKER_SIGNAL.ended}, 1);
    Atomics.notify(signal, REPLIES);
    process.exit(4);
  }
  else if (request.op === "close") {
    answer(request, { id: request.id, value: "closed" });
    data.port.close();
    data.asyncPort.close();
  }
});
`;

class ToyFailure extends Error {
  constructor(readonly failure: WorkerFailure) {
    super(failure.message);
  }
}

class ToyGone extends Error {}

function startToy(): { bridge: SyncWorkerBridge; worker: Worker; released: () => number } {
  let releases = 0;
  let worker: Worker | undefined;
  const bridge = new SyncWorkerBridge({
    failed: (failure) => new ToyFailure(failure),
    gone: () => new ToyGone("the toy worker has ended"),
    onRelease: () => {
      releases++;
      void worker?.terminate();
    },
  });
  const ends = bridge.workerEnds;
  worker = new Worker(TOY_WORKER, { eval: true, workerData: { ...ends }, transferList: [ends.port, ends.asyncPort] });
  worker.on("exit", () => bridge.workerEnded());
  return { bridge, worker, released: () => releases };
}

describe("SyncWorkerBridge: one request/response protocol for the stores' worker threads", () => {
  it("a synchronous call returns the worker's answer; a reported failure is the store's error, thrown by the call", () => {
    const { bridge } = startToy();
    expect(bridge.call("echo", { a: [1, "two"] })).toEqual({ a: [1, "two"] });
    const thrown = (() => {
      try {
        bridge.call("fail", "bad input");
      } catch (error) {
        return error;
      }
      return undefined;
    })();
    expect(thrown).toBeInstanceOf(ToyFailure);
    expect(thrown).toMatchObject({ failure: { kind: "toy", message: "toy failure: bad input" } });
    // The bridge keeps working after a failure.
    expect(bridge.call("echo", 7)).toBe(7);
    bridge.close();
  });

  it("asynchronous calls settle from the event loop, in order with synchronous ones; a failure rejects", async () => {
    const { bridge } = startToy();
    const slow = bridge.callAsync("slow", "later");
    const failed = bridge.callAsync("fail", "async");
    // Expectations attached at once: the rejection must never be unhandled while another is awaited.
    const settled = Promise.all([expect(slow).resolves.toBe("later"), expect(failed).rejects.toBeInstanceOf(ToyFailure)]);
    expect(bridge.call("echo", "now")).toBe("now");
    await settled;
    bridge.close();
  });

  it("close() settles the asynchronous answers already sent, then lets go once; later calls fail with gone()", async () => {
    const { bridge, released } = startToy();
    const before = bridge.callAsync("echo", "sent before close");
    bridge.close();
    await expect(before).resolves.toBe("sent before close");
    expect(released()).toBe(1);
    expect(bridge.ended).toBe(true);
    expect(() => bridge.call("echo", 1)).toThrow(ToyGone);
    await expect(bridge.callAsync("echo", 1)).rejects.toBeInstanceOf(ToyGone);
    bridge.close();
    expect(released()).toBe(1);
  });

  it("a worker that ends fails the calls waiting on it and every later call with gone(), never hangs", async () => {
    const { bridge, worker } = startToy();
    const waiting = bridge.callAsync("slow", "never answered");
    const exited = new Promise((resolve) => worker.once("exit", resolve));
    const crashing = bridge.callAsync("crash");
    await exited;
    await expect(waiting).rejects.toBeInstanceOf(ToyGone);
    await expect(crashing).rejects.toBeInstanceOf(ToyGone);
    expect(bridge.ended).toBe(true);
    expect(() => bridge.call("echo", 1)).toThrow("the toy worker has ended");
  });

  it("a synchronous call whose worker ends while it waits (and says so through the signal) throws gone() instead of waiting forever", () => {
    const { bridge, released } = startToy();
    expect(() => bridge.call("fail-to-start")).toThrow(ToyGone);
    expect(bridge.ended).toBe(true);
    expect(released()).toBe(1);
  });
});
