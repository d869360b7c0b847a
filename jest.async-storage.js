/**
 * Runs in each test file's sandbox before its tests (jest's setupFilesAfterEnv): disables every AsyncLocalStorage
 * the worker's previous test file enabled.
 *
 * Why: jest loads each test file's modules afresh, so every file makes new AsyncLocalStorage instances — jest-circus
 * one for its test context, Rein one for guard's call chain, OpenTelemetry one for its context manager in tracing
 * tests. Node 20 keeps each one enabled in a process-wide list until `disable()`, and every promise created
 * afterwards — in any later file of the same worker — visits the whole list: by a worker's hundredth file, each
 * `await` paid for a hundred or more storages. Measured on node 20.20: 600,000 awaits cost 43 ms of CPU with one
 * storage enabled and 3,805 ms with 100. A process running Rein has one or two.
 *
 * The storages are Node's own class (`node:async_hooks` is shared by every sandbox), so the instances enabled are
 * recorded by wrapping `run` and `enterWith` once per worker. A file's list is disabled when the next file starts —
 * not in its own `afterAll`, since the file's later hooks and jest's reporting may still enter its storages (and
 * `run` enables a storage again).
 */
const { AsyncLocalStorage } = require("node:async_hooks");

const TRACKER = Symbol.for("rein.test.enabledAsyncStorages");
const proto = AsyncLocalStorage.prototype;

if (proto[TRACKER] === undefined) {
  const tracker = { enabled: new Set() };
  for (const method of ["run", "enterWith"]) {
    const original = proto[method];
    proto[method] = function tracked(...args) {
      tracker.enabled.add(this);
      return original.apply(this, args);
    };
  }
  proto[TRACKER] = tracker;
}

const tracker = proto[TRACKER];
// The previous file of this worker is over: its storages are no longer entered by anything that runs.
for (const storage of tracker.enabled) storage.disable();
tracker.enabled = new Set();
