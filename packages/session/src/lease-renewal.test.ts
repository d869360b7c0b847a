/** `keepLease`: how a resumable run keeps its lease, on a synchronous store and on one with `asyncLeases`. */
import { keepLease, type RenewableLease } from "./lease-renewal";

beforeEach(() => jest.useFakeTimers());
afterEach(() => jest.useRealTimers());

/** A run whose renewals answer with what `renew` gives; records each call. */
function fakeRun(renew: () => boolean | Promise<boolean>): RenewableLease & { calls: number } {
  const run = { leaseLost: false, calls: 0, renew: () => (run.calls++, renew()) };
  return run;
}

test("renews every third of the lease while it runs, and not after it is stopped", () => {
  const run = fakeRun(() => true);
  const stop = keepLease(run, 3_000);
  jest.advanceTimersByTime(3_000);
  expect(run.calls).toBe(3);
  stop();
  jest.advanceTimersByTime(10_000);
  expect(run.calls).toBe(3);
  expect(run.leaseLost).toBe(false);
});

test("a renewal the store refuses marks the lease lost at once (another worker holds the run)", () => {
  const run = fakeRun(() => false);
  const stop = keepLease(run, 3_000);
  jest.advanceTimersByTime(1_000);
  expect(run.leaseLost).toBe(true);
  stop();
});

test("renewals that throw for a whole lease mark it lost; fewer do not", () => {
  const run = fakeRun(() => {
    throw new Error("database unreachable");
  });
  const stop = keepLease(run, 3_000);
  jest.advanceTimersByTime(2_000);
  expect(run.leaseLost).toBe(false);
  jest.advanceTimersByTime(1_000);
  expect(run.leaseLost).toBe(true);
  stop();
});

test("on an asynchronous store one renewal is in flight at a time; one unanswered for a whole lease marks it lost", async () => {
  let answer!: (renewed: boolean) => void;
  const run = fakeRun(() => new Promise<boolean>((resolve) => (answer = resolve)));
  const stop = keepLease(run, 3_000);
  jest.advanceTimersByTime(2_000);
  expect(run.calls).toBe(1); // the second tick waits for the first renewal
  expect(run.leaseLost).toBe(false);
  answer(true);
  await Promise.resolve();
  await Promise.resolve();
  jest.advanceTimersByTime(1_000);
  expect(run.calls).toBe(2);
  jest.advanceTimersByTime(3_000); // the second renewal has not answered for a whole lease
  expect(run.leaseLost).toBe(true);
  stop();
});

test("a renewal answered after the run stopped changes nothing", async () => {
  let answer!: (renewed: boolean) => void;
  const run = fakeRun(() => new Promise<boolean>((resolve) => (answer = resolve)));
  const stop = keepLease(run, 3_000);
  jest.advanceTimersByTime(1_000);
  stop(); // the run ended and released its lease
  answer(false); // the store no longer finds it owned
  await Promise.resolve();
  await Promise.resolve();
  expect(run.leaseLost).toBe(false);
});
