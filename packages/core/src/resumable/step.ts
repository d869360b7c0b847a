import { jsonProblem, sameJsonWhenStored } from "@rein/session";
import * as guard from "@rein/guard";
import { InterruptedError } from "@rein/guard";
import { isCancellation } from "../runtime/cancellation";
import type { RunEvents } from "../runtime/run-events";
import { currentScope, deriveScope, newNodeId, type ScopedFunctionInfo } from "../scope/call-scope";
import { RunPausedError, StepValueError } from "./resumable-errors";
import { currentPlace, placeFrame, Sequence, stepLabel, type StepPlace } from "./run-context";

const runInFrame = guard.runInFrame;

/**
 * A step's name with options: `external: true` marks a step that starts an
 * operation outside the process (a payment, an email). If the process dies
 * while it runs, the run is never continued automatically: someone checks
 * the operation's result first and then calls `resumeRun`.
 * @example
 * ```ts
 * await step({ name: "charge", external: true }, charge, order.id, order.total);
 * ```
 */
export interface StepOptions {
  name: string;
  /** @default false */
  external?: boolean;
}

/**
 * Runs `fn(...args)` as a step of the resumable run it is called in: a code
 * node below the run (`metadata.step` = `name`) that saves its arguments
 * and its result as JSON. When the run is resumed, a finished step returns
 * its saved result without calling `fn`. A step's arguments or result that
 * are not plain JSON are a {@link StepValueError} (the arguments' before
 * `fn` runs). Steps of one name are told apart by occurrence (the second
 * `step("fetch", …)` is `fetch #2`); finished steps must be called again in
 * the same order with the same arguments, else the run pauses naming the
 * first step that differs.
 *
 * `name` is a string or {@link StepOptions}; everything after `fn` is its
 * arguments, never options. Outside a resumable run it just calls `fn`.
 *
 * @example
 * ```ts
 * class Pipeline extends Agent {
 *   static methodOptions = { process: { resumable: true } };
 *   async process(url: string) {
 *     const page = await step("fetch", fetchText, url);
 *     return step("summarize", (text: string) => this.ask(`Summarize: ${text}`), page);
 *   }
 * }
 * ```
 */
export function step<A extends unknown[], R>(name: string | StepOptions, fn: (...args: A) => R, ...args: A): R {
  const place = currentPlace();
  const options = stepOptions("step", name, fn);
  if (place === undefined) return fn(...args);
  return runStep(place, options.name, options.external === true, "step", fn, args);
}

/**
 * Runs `fn(...args)` as a named group of steps: a node of its own below
 * the run (or the enclosing workflow), whose steps are named within it, so
 * nested workflows keep stable names. A finished workflow returns its saved
 * result on resume without calling `fn`; an unfinished one runs `fn` again,
 * and its finished steps return their saved results.
 * @example
 * ```ts
 * const report = await workflow("chapter", async (title: string) => {
 *   const draft = await step("draft", write, title);
 *   return step("review", review, draft);
 * }, "Intro");
 * ```
 */
export function workflow<A extends unknown[], R>(name: string, fn: (...args: A) => R, ...args: A): R {
  const place = currentPlace();
  stepOptions("workflow", name, fn);
  if (place === undefined) return fn(...args);
  return runStep(place, name, false, "workflow", fn, args);
}

/** A branch of {@link parallel}: the function, then its arguments. */
export type ParallelBranch = readonly [(...args: never[]) => unknown, ...unknown[]];

/** What {@link parallel} resolves with: each branch's result under its name. */
export type ParallelResults<B extends Record<string, ParallelBranch>> = { -readonly [K in keyof B]: Awaited<ReturnType<B[K][0]>> };

/**
 * Runs the branches at once, each as a {@link workflow} named after its
 * key, so each saves its own progress: on resume a finished branch returns
 * its saved result and an unfinished one continues from its own finished
 * steps. Resolves with every branch's result once all have finished; when
 * one fails, it waits for the others to stop (their saved results stay)
 * and rejects with the first failure in key order.
 * @example
 * ```ts
 * const { en, fr } = await parallel({ en: [translate, text, "en"], fr: [translate, text, "fr"] });
 * ```
 */
export async function parallel<B extends Record<string, ParallelBranch>>(branches: B): Promise<ParallelResults<B>> {
  if (typeof branches !== "object" || branches === null || Array.isArray(branches)) {
    throw new TypeError("parallel(): expected { name: [fn, ...args] }");
  }
  const names = Object.keys(branches);
  for (const name of names) {
    const branch = branches[name];
    if (!Array.isArray(branch) || typeof branch[0] !== "function") throw new TypeError(`parallel(): branch '${name}' must be [fn, ...args]`);
  }
  // Started in key order, synchronously: each branch takes its saved position before any of them awaits.
  const running = names.map((name) => {
    const [fn, ...args] = branches[name]!;
    try {
      return Promise.resolve(workflow(name, fn as (...args: unknown[]) => unknown, ...args));
    } catch (error) {
      return Promise.reject(error);
    }
  });
  const settled = await Promise.allSettled(running);
  const results: Record<string, unknown> = {};
  for (let index = 0; index < names.length; index++) {
    const outcome = settled[index]!;
    if (outcome.status === "rejected") throw outcome.reason;
    results[names[index]!] = outcome.value;
  }
  return results as ParallelResults<B>;
}

function stepOptions(what: string, name: unknown, fn: unknown): StepOptions {
  const options = typeof name === "string" ? { name } : (name as StepOptions);
  if (what === "step" && typeof name === "object" && name !== null && !Array.isArray(name)) {
    for (const key of Object.keys(name)) {
      if (key !== "name" && key !== "external") throw new TypeError(`step(): unknown option '${key}' (expected name, external)`);
    }
    if (options.external !== undefined && typeof options.external !== "boolean") throw new TypeError("step(): 'external' must be true or false");
  }
  if (typeof options?.name !== "string" || options.name.length === 0) {
    throw new TypeError(`${what}(): the first argument must be a non-empty name${what === "step" ? " or { name, external }" : ""}, got ${JSON.stringify(name)}`);
  }
  if (typeof fn !== "function") throw new TypeError(`${what}("${options.name}"): the second argument must be the function to run`);
  return options;
}

function runStep<A extends unknown[], R>(
  place: StepPlace,
  name: string,
  external: boolean,
  kind: "step" | "workflow",
  fn: (...args: A) => R,
  args: A,
): R {
  const { run, sequence } = place;
  if (run.pauseRequested) throw run.pause("pause", `paused on request before step "${name}"`, name);
  const problem = jsonProblem(args);
  if (problem !== undefined) throw new StepValueError(name, "input", problem[0], problem[1]);
  const inputText = JSON.stringify(args);
  const occurrence = sequence.occurrence(name);
  const label = stepLabel(name, occurrence);
  const matches = (step: { name: string; occurrence: number; kind: string }) => step.name === name && step.occurrence === occurrence && step.kind === kind;
  // Unfinished steps the code no longer calls, followed by the step it calls: superseded, and the call goes on from there.
  let ahead = sequence.next;
  while (sequence.saved[ahead] !== undefined && sequence.saved[ahead]!.status !== "completed" && !matches(sequence.saved[ahead]!)) ahead++;
  if (ahead > sequence.next && sequence.saved[ahead] !== undefined && matches(sequence.saved[ahead]!)) {
    for (; sequence.next < ahead; sequence.next++) run.update(sequence.saved[sequence.next]!.id, { metadata: { superseded: true } });
  }
  const saved = sequence.saved[sequence.next];
  let reopened: string | undefined;
  if (saved !== undefined) {
    sequence.next++;
    const same = matches(saved);
    if (saved.status === "completed") {
      if (!same) {
        throw run.pause(
          "incompatible",
          `${kind} "${label}" is called where the saved run finished "${stepLabel(saved.name, saved.occurrence)}": ` +
            `finished steps were removed or reordered, so the saved results cannot be used`,
          stepLabel(saved.name, saved.occurrence),
        );
      }
      if (!sameJsonWhenStored(saved.inputText, inputText)) {
        throw run.pause("incompatible", `the input of finished ${kind} "${label}" changed (saved ${saved.inputText}, now ${inputText})`, label);
      }
      run.replayed++;
      return (saved.isAsync ? Promise.resolve(saved.output) : saved.output) as R;
    }
    // An unfinished step runs again on its own node; one the code no longer calls here is superseded (skipped on resume).
    if (same) reopened = saved.id;
    else run.update(saved.id, { metadata: { superseded: true } });
  }
  if (run.leaseLost) {
    throw run.pause("lease-lost", `this worker lost the lease of run ${run.runId} (another worker may be running it): ${kind} "${label}" was not started`, label);
  }
  const nodeId = reopened ?? newNodeId();
  const metadata: Record<string, unknown> = { status: "running", step: name, occurrence };
  if (kind === "workflow") metadata["workflow"] = true;
  if (external) metadata["external"] = true;
  // The step's own node is written under the run's lease (run.update, run.writeOptions): a worker that lost it writes nothing here.
  if (reopened === undefined) sequence.cursor.append({ id: nodeId, role: "code", name, input: args, metadata }, run.writeOptions);
  else run.update(nodeId, { input: args, metadata: { ...metadata, error: undefined } });
  // Started-but-unsaved must be stored before an outside operation begins. An async function waits for
  // it, on a store with an asynchronous path without blocking the event loop; a synchronous one cannot
  // wait there, so on such a store its commit is only started (docs/core/resumable.md).
  if (external) {
    let saving: Promise<void> | undefined;
    if (isAsyncFunction(fn)) saving = run.save();
    else run.flush();
    if (saving !== undefined) return saving.then(() => startStep(place, nodeId, name, label, kind, fn, args)) as R;
  }
  return startStep(place, nodeId, name, label, kind, fn, args);
}

/** `async function` / `async () =>` (what a step can await before calling it). */
function isAsyncFunction(fn: Function): boolean {
  return (fn as { [Symbol.toStringTag]?: string })[Symbol.toStringTag] === "AsyncFunction";
}

/** Runs the step's function on its node (already written) and saves what it returns. */
function startStep<A extends unknown[], R>(
  place: StepPlace,
  nodeId: string,
  name: string,
  label: string,
  kind: "step" | "workflow",
  fn: (...args: A) => R,
  args: A,
): R {
  const { run } = place;
  const writer = run.writer;
  const inner = new Sequence(run, nodeId);
  const parent = currentScope();
  const info: ScopedFunctionInfo = { name: `${kind} ${name}`, doc: "", expose: "full" };
  const scope = deriveScope(parent!);
  scope.fn = info;
  scope.writer = writer;
  scope.cursor = inner.cursor;

  const events = scope.events?.listening === true ? scope.events : undefined;
  events?.emit({ type: "node", phase: "start", nodeId, role: "code", name });
  const here: StepPlace = { run, sequence: inner };
  let value: R;
  try {
    value = runInFrame(placeFrame({ key: `rein:${kind}:${name}`, name: `${kind} ${name}` }, here), enter, { data: scope }, fn, args);
  } catch (error) {
    failStep(place, nodeId, error, events, name);
    throw error;
  }
  if (value instanceof Promise) {
    return value.then(
      (result: unknown) => finishStep(place, inner, nodeId, label, result, true, events, name),
      (error: unknown) => {
        failStep(place, nodeId, error, events, name);
        throw error;
      },
    ) as R;
  }
  return finishStep(place, inner, nodeId, label, value, false, events, name);
}

function enter<A extends unknown[], R>(fn: (...args: A) => R, args: A): R {
  return fn(...args);
}

function finishStep<R>(
  place: StepPlace,
  inner: Sequence,
  nodeId: string,
  label: string,
  value: R,
  isAsync: boolean,
  events: RunEvents | undefined,
  name: string,
): R {
  const { run } = place;
  try {
    const missing = inner.missingFinished();
    if (missing !== undefined) {
      throw run.pause(
        "incompatible",
        `finished step "${stepLabel(missing.name, missing.occurrence)}" inside "${label}" is no longer called: removed steps cannot resume`,
        stepLabel(missing.name, missing.occurrence),
      );
    }
    const metadata: Record<string, unknown> = { status: "completed" };
    if (isAsync) metadata["async"] = true;
    if (value === undefined) metadata["void"] = true;
    else {
      const problem = jsonProblem(value);
      if (problem !== undefined) throw new StepValueError(label, "result", problem[0], problem[1]);
    }
    run.update(nodeId, { output: value === undefined ? null : value, metadata });
    // A finished step is saved before the run goes on: a crash after this line never runs it again.
    // Refused (LeaseLostError) when another worker claimed the run meanwhile: its result stands, not this one.
    // An async step awaits its save point (on a store with an asynchronous path the commit does not block
    // the event loop); a synchronous one cannot wait, so there it only starts the commit (docs/core/resumable.md).
    let saving: Promise<void> | undefined;
    if (isAsync) saving = run.save();
    else run.flush();
    if (saving !== undefined) {
      return saving.then(
        () => stepEnded(events, nodeId, name, value),
        (error: unknown) => {
          failStep(place, nodeId, error, events, name);
          throw error;
        },
      ) as R;
    }
  } catch (error) {
    failStep(place, nodeId, error, events, name);
    throw error;
  }
  return stepEnded(events, nodeId, name, value);
}

function stepEnded<R>(events: RunEvents | undefined, nodeId: string, name: string, value: R): R {
  events?.emit({ type: "node", phase: "end", nodeId, role: "code", name, status: "completed" });
  return value;
}

function failStep(place: StepPlace, nodeId: string, error: unknown, events: RunEvents | undefined, name: string): void {
  const status = RunPausedError.isInstance(error)
    ? "paused"
    : InterruptedError.isInstance(error)
      ? "interrupted"
      : isCancellation(error)
        ? "cancelled"
        : "error";
  place.run.update(nodeId, { metadata: { status, error: guard.describeError(error) } });
  events?.emit({ type: "node", phase: "end", nodeId, role: "code", name, status });
}
