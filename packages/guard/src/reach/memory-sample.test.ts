/**
 * The memory figure reach checks against is sampled off the call path while
 * Agent entries keep asking, and the sampler stops once they stop: an idle
 * process is not woken 20 times a second for ever, and the first entry after
 * an idle spell reads memory afresh instead of a figure from before it.
 * Fake timers: the sampler's interval is driven by the test, not the clock.
 */
import { MEMORY_SAMPLE_MS, memoryUsageMb, setMemoryReader } from "./environment";

let memoryMb = 100;

beforeEach(() => {
  jest.useFakeTimers();
  memoryMb = 100;
  setMemoryReader(() => memoryMb);
});

afterEach(() => {
  setMemoryReader(undefined);
  jest.useRealTimers();
});

describe("the memory sampler", () => {
  it("while entries keep asking, each figure is at most one sample period old", () => {
    expect(memoryUsageMb()).toBe(100);
    memoryMb = 150;
    // Between samples an entry gets the last sample: no file read on the call path.
    expect(memoryUsageMb()).toBe(100);
    jest.advanceTimersByTime(MEMORY_SAMPLE_MS);
    expect(memoryUsageMb()).toBe(150);
    expect(jest.getTimerCount()).toBe(1);
  });

  it("stops after a second no entry asked, and the next entry reads memory afresh (it got the figure from before the idle spell)", () => {
    expect(memoryUsageMb()).toBe(100);
    memoryMb = 300;
    jest.advanceTimersByTime(5_000);
    // Nothing asked for five seconds: no timer left to wake the process.
    expect(jest.getTimerCount()).toBe(0);
    expect(memoryUsageMb()).toBe(300);
    // And sampling resumes for the entries that follow.
    expect(jest.getTimerCount()).toBe(1);
    memoryMb = 320;
    memoryUsageMb();
    jest.advanceTimersByTime(MEMORY_SAMPLE_MS);
    expect(memoryUsageMb()).toBe(320);
  });
});
