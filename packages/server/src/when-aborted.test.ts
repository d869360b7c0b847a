import { getEventListeners } from "node:events";
import { whenAborted, whenAnyAborted } from "./when-aborted";

/** How many abort listeners `signal` holds. */
const listeners = (signal: AbortSignal): number => getEventListeners(signal, "abort").length;

describe("whenAborted", () => {
  it("reacts at once to a signal already aborted, else once on abort; the returned function stops listening", () => {
    const seen: string[] = [];
    whenAborted(AbortSignal.abort(), () => seen.push("already"));
    const controller = new AbortController();
    whenAborted(controller.signal, () => seen.push("later"));
    const left = new AbortController();
    whenAborted(left.signal, () => seen.push("left"))();
    controller.abort();
    left.abort();
    expect(seen).toEqual(["already", "later"]);
  });
});

describe("whenAnyAborted", () => {
  it("reacts once, to the first of its signals that aborts, and leaves the others' listeners (a long-lived server signal keeps none)", () => {
    const request = new AbortController();
    const server = new AbortController();
    let reactions = 0;
    whenAnyAborted([request.signal, server.signal], () => reactions++);
    expect([listeners(request.signal), listeners(server.signal)]).toEqual([1, 1]);
    request.abort();
    // The server's signal lives on: nothing of this stream stays on it.
    expect(listeners(server.signal)).toBe(0);
    server.abort();
    expect(reactions).toBe(1);
  });

  it("reacts at once when one is already aborted, listening to none; stopping it leaves every listener", () => {
    const server = new AbortController();
    let reactions = 0;
    whenAnyAborted([AbortSignal.abort(), server.signal], () => reactions++);
    expect([reactions, listeners(server.signal)]).toEqual([1, 0]);
    const request = new AbortController();
    const stop = whenAnyAborted([request.signal, server.signal], () => reactions++);
    stop();
    request.abort();
    server.abort();
    expect(reactions).toBe(1);
    expect([listeners(request.signal), listeners(server.signal)]).toEqual([0, 0]);
  });
});
