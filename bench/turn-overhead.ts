/**
 * Per-turn overhead as a user sees it: the same model-tool turn (4 model
 * requests, 3 tool calls, zero-latency scripted model) through Rein's
 * `Agent.ask` and through a hand-written loop making the same provider and
 * tool calls, in one process, interleaved round by round.
 *
 * Rein is measured in three set-ups:
 * - bare: nothing recorded, loop detection off;
 * - guarded: loop detection on (the Runtime default), nothing recorded;
 * - default: loop detection on and every node recorded in an in-memory
 *   session store (one session per round; `historyFilter: false`, so each
 *   turn sends what the hand-written loop sends instead of a growing history);
 * - streamed: the default set-up through `agent.stream()`, every event read
 *   (the provider streams; each request's text arrives as text-delta events);
 * - sqlite: the same as default, recorded in a SQLite file store (WAL; a finished
 *   top-level call is committed before it returns; one store for the whole
 *   run, as a server keeps one, and a new session per round);
 * - postgres: the same, recorded in a PostgresSessionStore against an
 *   embedded PostgreSQL 18 the bench starts (fsync on, 127.0.0.1, as
 *   bench/session-store-postgres.ts) and stops at the end; one store, a new
 *   session per round. When the server cannot start, the row is skipped and
 *   the reason printed;
 * - otel: the default set-up with an OpenTelemetry SDK registered
 *   (sdk-trace-base's BasicTracerProvider, a SimpleSpanProcessor into an
 *   InMemorySpanExporter emptied between rounds): every span recorded;
 * - otel-unsampled: the same provider with the AlwaysOff sampler (spans are
 *   made, none records: the cost of a sampled-out trace).
 * Every other set-up runs with the OpenTelemetry API and no SDK, as an app
 * that installs none does. What that costs per turn is printed beside them:
 * the tracer checks Rein made in a counted turn (one where a run or an Agent
 * entry starts) times their cost measured here. Target (issue 15): ≤ 5 µs.
 *
 * Warm-up runs until the per-turn figure stops moving (at least 1,500 turns:
 * V8 keeps optimising Rein's paths for about that long), then 7 rounds are
 * timed; min / median / max of the added µs per turn are printed.
 *
 * Target (issue 9): the default set-up adds ≤ 40 µs per turn (median).
 * Run: pnpm bench (or pnpm exec tsx --tsconfig tsconfig.test.json bench/turn-overhead.ts)
 */
import { mkdtempSync } from "node:fs";
import { context, trace } from "@opentelemetry/api";
import { AlwaysOffSampler, BasicTracerProvider, InMemorySpanExporter, SimpleSpanProcessor } from "@opentelemetry/sdk-trace-base";
import { tmpdir } from "node:os";
import { join } from "node:path";
import {
  type SessionStoreLike,
  Agent,
  Context,
  InMemorySessionStore,
  Runtime,
  SessionStore,
  ScriptedProvider,
  SessionNodeWriter,
  type Message,
  type ModelRequest,
  type ToolResultBlock,
} from "@rein/core";
import { PostgresSessionStore } from "../packages/store-postgres/src/postgres-session-store";
import { freshSchemaName, startEmbeddedPostgres, type EmbeddedPostgresServer } from "../packages/store-postgres/src/__fixtures__/embedded-postgres";
import { activeTracer } from "../packages/core/src/telemetry/tracing";
import { minMedianMax as stats } from "./measure";

const TURNS_PER_ROUND = 2_000;
const ROUNDS = 7;
const MIN_WARMUP_TURNS = 1_500;
const TARGET_US = 40;

function script(): ScriptedProvider {
  return new ScriptedProvider(
    [
      (_request: ModelRequest, index: number) =>
        index % 4 === 3 ? "All three lookups done." : { toolCalls: [{ name: "lookup", input: { key: `k${index % 4}` } }] },
    ],
    // Nobody reads the requests here: copying each one would be measured as overhead of both loops.
    { whenExhausted: "repeat-last", recordRequests: false },
  );
}

class Lookup extends Agent {
  static methodOptions = { lookup: { tool: true, description: "Look a key up." } };
  lookup(key: string): string {
    return `value of ${key}`;
  }
}

type Setup = "bare" | "guarded" | "default" | "streamed" | "sqlite" | "postgres" | "otel" | "otel-unsampled";

const spanExporter = new InMemorySpanExporter();
const tracerProviders = {
  otel: new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(spanExporter)] }),
  "otel-unsampled": new BasicTracerProvider({ sampler: new AlwaysOffSampler(), spanProcessors: [new SimpleSpanProcessor(spanExporter)] }),
};
const OTEL_TARGET_US = 5;
/** Spans the last otel round recorded per turn. */
let spansPerTurn = 0;

/** A function running `count` turns and returning ns per turn. */
type Turns = (count: number) => Promise<number>;

let sqlite: SessionStore | undefined;
/** The postgres set-up's one store, open while its server runs. */
let postgres: PostgresSessionStore | undefined;
let rounds = 0;

/** A context recording into `store` (kept for the whole run, as a server keeps one), in a new session. */
function persistedContext(store: SessionStoreLike): Context {
  const sessionId = `bench-${++rounds}`;
  store.createSession(sessionId, {});
  return new Context({}, { store: new SessionNodeWriter(store, sessionId), historyFilter: false });
}

const POSTGRES_START_TIMEOUT_MS = 60_000;

/** Starts the embedded PostgreSQL and opens the store; the reason instead when either fails. */
async function startPostgres(): Promise<{ server: EmbeddedPostgresServer; store: PostgresSessionStore } | string> {
  let timer: NodeJS.Timeout | undefined;
  const starting = startEmbeddedPostgres({ durable: true });
  try {
    const server = await Promise.race([
      starting,
      new Promise<never>((_, fail) => {
        timer = setTimeout(() => fail(new Error(`not ready after ${POSTGRES_START_TIMEOUT_MS / 1000} s`)), POSTGRES_START_TIMEOUT_MS);
      }),
    ]);
    try {
      return { server, store: new PostgresSessionStore({ connectionString: server.connectionString, schema: freshSchemaName(), shutdownFlush: false }) };
    } catch (error) {
      await server.stop();
      throw error;
    }
  } catch (error) {
    // A server that comes up after the timeout is stopped when it does.
    void starting.then((late) => late.stop(), () => undefined);
    return error instanceof Error ? error.message : String(error);
  } finally {
    clearTimeout(timer);
  }
}

/** The store's synchronous calls, each a round trip through the worker thread to the server. */
const STORE_CALLS = ["head", "commit", "hasNode", "readAncestry", "readNodes", "getSession", "hasSession", "setHead", "listBranches"] as const;
type StoreCall = (typeof STORE_CALLS)[number];

/**
 * Per-turn round trips of the postgres set-up, measured in `count` further
 * (untimed) turns: which store calls ran, how often per turn, and how long
 * each took (the event loop waits that long).
 */
async function postgresCalls(
  turns: Turns,
  store: PostgresSessionStore,
  count: number,
): Promise<{ turnUs: number; calls: { name: StoreCall; perTurn: number; us: number }[] }> {
  const spent = new Map<StoreCall, { calls: number; ns: number }>(STORE_CALLS.map((name) => [name, { calls: 0, ns: 0 }]));
  const instrumented = store as unknown as Record<StoreCall, (...args: unknown[]) => unknown>;
  for (const name of STORE_CALLS) {
    const call = instrumented[name].bind(store);
    const tally = spent.get(name)!;
    instrumented[name] = (...args: unknown[]): unknown => {
      const start = process.hrtime.bigint();
      try {
        return call(...args);
      } finally {
        tally.ns += Number(process.hrtime.bigint() - start);
        tally.calls++;
      }
    };
  }
  let turnNs: number;
  try {
    turnNs = await turns(count);
  } finally {
    // Back to the prototype's methods.
    for (const name of STORE_CALLS) delete instrumented[name];
  }
  const calls = [...spent]
    .filter(([, tally]) => tally.calls > 0)
    .map(([name, tally]) => ({ name, perTurn: tally.calls / count, us: tally.ns / 1000 / tally.calls }));
  return { turnUs: turnNs / 1000, calls };
}

function reinTurns(setup: Setup): Turns {
  const runtime = new Runtime({ provider: script(), loopDetection: { enabled: setup !== "bare" }, maxSteps: Number.MAX_SAFE_INTEGER });
  const agent = new Lookup({ runtime });
  return async (count) => {
    let context: Context;
    if (setup === "default" || setup === "streamed" || setup === "otel" || setup === "otel-unsampled") {
      const store = new InMemorySessionStore();
      store.createSession("bench", {});
      context = new Context({}, { store: new SessionNodeWriter(store, "bench", { batching: "manual" }), historyFilter: false });
    } else if (setup === "sqlite") {
      sqlite ??= new SessionStore({ path: join(mkdtempSync(join(tmpdir(), "rein-turn-")), "sessions.db"), shutdownFlush: false });
      context = persistedContext(sqlite);
    } else if (setup === "postgres") {
      context = persistedContext(postgres!);
    } else {
      context = new Context({}, { historyFilter: false });
    }
    // The SDK is registered only while its set-up runs: every other set-up runs with the API alone.
    if (setup === "otel" || setup === "otel-unsampled") trace.setGlobalTracerProvider(tracerProviders[setup]);
    const start = process.hrtime.bigint();
    if (setup === "streamed") {
      // The same turn through agent.stream(), every event read (the provider streams its answers).
      for (let i = 0; i < count; i++) {
        const run = agent.stream("Look up k0, k1 and k2.", { context });
        for await (const event of run) void event;
        await run.result;
      }
    } else {
      for (let i = 0; i < count; i++) await agent.ask("Look up k0, k1 and k2.", { context });
    }
    const ns = Number(process.hrtime.bigint() - start) / count;
    if (setup === "otel" || setup === "otel-unsampled") {
      trace.disable();
      spansPerTurn = spanExporter.getFinishedSpans().length / count;
      if (setup === "otel" && spansPerTurn === 0) throw new Error("the SDK recorded no spans: its registration failed, so the traced figures would be wrong");
      spanExporter.reset();
    }
    return ns;
  };
}

/**
 * The SDK's own share of the in-memory set-up: the spans one turn makes
 * (counted), made and ended directly with the same provider and a few
 * attributes each, without Rein — µs per turn, median of 7 rounds.
 */
async function sdkAloneUs(turns: Turns): Promise<{ spans: number; us: number }> {
  await turns(1);
  const spans = spansPerTurn;
  const tracer = tracerProviders.otel.getTracer("bench");
  const turn = () => {
    const root = tracer.startSpan("invoke_agent Lookup");
    root.setAttributes({ "gen_ai.operation.name": "invoke_agent", "gen_ai.agent.name": "Lookup" });
    const parent = trace.setSpan(context.active(), root);
    for (let i = 1; i < spans; i++) {
      const span = tracer.startSpan("chat scripted", {}, parent);
      span.setAttributes({ "gen_ai.operation.name": "chat", "gen_ai.provider.name": "scripted", "gen_ai.usage.input_tokens": 10, "gen_ai.usage.output_tokens": 5 });
      span.end();
    }
    root.end();
  };
  for (let i = 0; i < 5_000; i++) turn();
  spanExporter.reset();
  const rounds: number[] = [];
  for (let round = 0; round < 7; round++) {
    const start = process.hrtime.bigint();
    for (let i = 0; i < TURNS_PER_ROUND; i++) turn();
    rounds.push(Number(process.hrtime.bigint() - start) / TURNS_PER_ROUND / 1000);
    spanExporter.reset();
  }
  return { spans, us: stats(rounds).median! };
}

/**
 * What the OpenTelemetry API costs a turn when no SDK is registered: Rein
 * checks for a registered tracer provider where a run or an Agent entry
 * starts (and does nothing else for tracing), so the cost is those checks.
 * They are counted in one turn (each check reads the API's global `trace`
 * slot once: a counting getter stands in for it) and timed here.
 */
async function noSdkCost(turns: Turns): Promise<{ checks: number; nsPerCheck: number }> {
  const key = Symbol.for("opentelemetry.js.api.1");
  const globals = globalThis as unknown as Record<symbol, object | undefined>;
  // Created here when no SDK was ever registered: removed again below, or a later registration would find a
  // registry without a version and refuse itself (the traced set-ups would then make no spans at all).
  const created = globals[key] === undefined;
  const registry = (globals[key] ??= {});
  let checks = 0;
  Object.defineProperty(registry, "trace", {
    configurable: true,
    get: () => {
      checks++;
      return undefined;
    },
  });
  try {
    await turns(1);
  } finally {
    delete (registry as { trace?: unknown }).trace;
    if (created) delete globals[key];
  }
  const rounds: number[] = [];
  let sink = 0;
  for (let round = 0; round < 7; round++) {
    const count = 1_000_000;
    const start = process.hrtime.bigint();
    for (let i = 0; i < count; i++) if (activeTracer() === undefined) sink++;
    rounds.push(Number(process.hrtime.bigint() - start) / count);
  }
  if (sink === 0) throw new Error("an SDK is registered: the no-SDK path was not measured");
  return { checks, nsPerCheck: stats(rounds).median! };
}

function handWrittenTurns(): Turns {
  const model = script();
  const spec = new Lookup().asTools().map((tool) => tool.spec);
  const lookup = (key: string) => `value of ${key}`;
  return async (count) => {
    const start = process.hrtime.bigint();
    for (let i = 0; i < count; i++) {
      const messages: Message[] = [{ role: "user", content: [{ type: "text", text: "Look up k0, k1 and k2." }] }];
      for (;;) {
        const response = await model.complete({ system: "", messages: [...messages], tools: spec });
        messages.push({ role: "assistant", content: response.content });
        const calls = response.content.filter((block) => block.type === "tool_use");
        if (calls.length === 0) break;
        const results: ToolResultBlock[] = calls.map((call) => ({
          type: "tool_result",
          toolUseId: call.id,
          content: lookup((call.input as { key: string }).key),
        }));
        messages.push({ role: "user", content: results });
      }
    }
    return Number(process.hrtime.bigint() - start) / count;
  };
}

/** Runs blocks of 500 turns until two consecutive blocks differ by under 5 % (after at least MIN_WARMUP_TURNS). */
async function warmUp(turns: Turns): Promise<number> {
  let done = 0;
  let previous = Infinity;
  for (;;) {
    const current = await turns(500);
    done += 500;
    if (done >= MIN_WARMUP_TURNS && Math.abs(current - previous) / current < 0.05) return done;
    if (done >= 20_000) return done;
    previous = current;
  }
}

const us = (ns: number) => (ns / 1000).toFixed(1);

export async function benchTurnOverhead(): Promise<number> {
  console.log("\n== model-tool turn (4 requests, 3 tool calls, zero-latency model): Rein vs a hand-written loop, µs per turn ==");
  const started = await startPostgres();
  if (typeof started === "string") console.log(`postgres set-up skipped: embedded PostgreSQL could not start or be opened (${started})`);
  else postgres = started.store;
  try {
    return await measure();
  } finally {
    sqlite?.close();
    sqlite = undefined;
    postgres?.close();
    postgres = undefined;
    if (typeof started !== "string") await started.server.stop();
  }
}

async function measure(): Promise<number> {
  const hand = handWrittenTurns();
  const setups: Setup[] = [
    "bare",
    "guarded",
    "default",
    "streamed",
    "sqlite",
    ...(postgres === undefined ? [] : ["postgres" as const]),
    "otel",
    "otel-unsampled",
  ];
  const rein = Object.fromEntries(setups.map((setup) => [setup, reinTurns(setup)])) as Record<Setup, Turns>;
  // Two phases. Once an SDK has been registered in a process, the code paths that make spans have run and
  // V8 has seen more shapes, so the untraced set-ups would measure slower than in a process that never traces
  // (the set-ups a user without OpenTelemetry runs). Phase 1 measures every untraced set-up before any SDK is
  // registered; phase 2 measures the traced set-ups against the in-memory set-up measured again beside them.
  const untraced = setups.filter((setup) => setup !== "otel" && setup !== "otel-unsampled");
  const traced = ["default", "otel", "otel-unsampled"] as const;
  const warm = [await warmUp(hand)];
  for (const setup of untraced) warm.push(await warmUp(rein[setup]));
  const handRounds: number[] = [];
  const added: Record<Setup, number[]> = { bare: [], guarded: [], default: [], streamed: [], sqlite: [], postgres: [], otel: [], "otel-unsampled": [] };
  for (let round = 0; round < ROUNDS; round++) {
    const handNs = await hand(TURNS_PER_ROUND);
    handRounds.push(handNs);
    for (const setup of untraced) added[setup].push((await rein[setup](TURNS_PER_ROUND)) - handNs);
  }
  // The no-SDK cost is measured while no SDK has ever been registered.
  const { checks, nsPerCheck } = await noSdkCost(rein.default);
  for (const setup of ["otel", "otel-unsampled"] as const) warm.push(await warmUp(rein[setup]));
  const tracedAdded: Record<(typeof traced)[number], number[]> = { default: [], otel: [], "otel-unsampled": [] };
  for (let round = 0; round < ROUNDS; round++) {
    const handNs = await hand(TURNS_PER_ROUND);
    for (const setup of traced) tracedAdded[setup].push((await rein[setup](TURNS_PER_ROUND)) - handNs);
  }
  added.otel = tracedAdded.otel;
  added["otel-unsampled"] = tracedAdded["otel-unsampled"];
  const handStats = stats(handRounds);
  console.log(`warm-up: ${warm.join(" / ")} turns (hand, ${[...untraced, "otel", "otel-unsampled"].join(", ")}); ${ROUNDS} rounds of ${TURNS_PER_ROUND} turns per phase (untraced first, then traced)`);
  console.log(`hand-written loop: ${us(handStats.median)} µs/turn (min ${us(handStats.min)}, max ${us(handStats.max)})`);
  const labels: Record<Setup, string> = {
    bare: "Rein, nothing recorded, loops off",
    guarded: "Rein, loop detection on",
    default: "Rein, loops on + in-memory recording",
    streamed: "Rein, same, through agent.stream()",
    sqlite: "Rein, loops on + SQLite recording",
    postgres: "Rein, loops on + Postgres recording",
    otel: "Rein, default + OTel SDK, in-memory export",
    "otel-unsampled": "Rein, default + OTel SDK, sampled out",
  };
  for (const setup of setups) {
    const { min, median, max } = stats(added[setup]);
    console.log(`${labels[setup].padEnd(38)} +${us(median)} µs/turn (min +${us(min)}, max +${us(max)})`);
  }
  const inMemory = stats(added.default);
  // The median as the SQLite line has always computed it (median minus median);
  // min and max of the round-by-round differences (each round's two set-ups ran against the same hand-written round).
  const over = (setup: Setup) => {
    const rounds = stats(added[setup].map((ns, round) => ns - added.default[round]!));
    return { min: rounds.min! / 1000, median: (stats(added[setup]).median! - inMemory.median!) / 1000, max: rounds.max! / 1000 };
  };
  const streamed = over("streamed");
  console.log(`Streaming over ask (median): ${streamed.median.toFixed(1)} µs per 4-request turn (round by round: min ${streamed.min.toFixed(1)}, max ${streamed.max.toFixed(1)})`);
  const persisted = over("sqlite").median;
  console.log(`SQLite recording over in-memory recording (median): ${persisted.toFixed(1)} µs/turn — issue 10 target ≤ 150 µs (${persisted <= 150 ? "met" : "NOT met"})`);
  if (postgres !== undefined) {
    const { min, median, max } = over("postgres");
    console.log(`Postgres recording over in-memory recording (median): ${median.toFixed(1)} µs/turn (round by round: min ${min.toFixed(1)}, max ${max.toFixed(1)})`);
    const { turnUs, calls } = await postgresCalls(rein.postgres, postgres, 500);
    const inCalls = calls.reduce((sum, call) => sum + call.perTurn * call.us, 0);
    console.log(
      `  store calls per turn (500 further turns, ${turnUs.toFixed(0)} µs/turn): ` +
        `${calls.map((call) => `${call.name} ${call.perTurn.toFixed(2)} × ${call.us.toFixed(0)} µs`).join(", ")}; ${inCalls.toFixed(0)} µs/turn in store calls`,
    );
  }
  const noSdkUs = (checks * nsPerCheck) / 1000;
  console.log(
    `OpenTelemetry API, no SDK registered: ${checks} tracer checks per turn × ${nsPerCheck.toFixed(1)} ns = ${noSdkUs.toFixed(3)} µs/turn ` +
      `(nothing else runs for tracing) — issue 15 target ≤ ${OTEL_TARGET_US} µs (${noSdkUs <= OTEL_TARGET_US ? "met" : "NOT met"})`,
  );
  for (const setup of ["otel", "otel-unsampled"] as const) {
    // Against the in-memory set-up measured in the same phase, round by round.
    const rounds = stats(tracedAdded[setup].map((ns, round) => ns - tracedAdded.default[round]!));
    const median = (stats(tracedAdded[setup]).median! - stats(tracedAdded.default).median!) / 1000;
    console.log(
      `${labels[setup]} over no SDK (median): ${median.toFixed(1)} µs/turn (round by round: min ${(rounds.min! / 1000).toFixed(1)}, max ${(rounds.max! / 1000).toFixed(1)})`,
    );
  }
  const alone = await sdkAloneUs(rein.otel);
  console.log(`  of which the SDK itself: ${alone.spans} spans per turn made and ended directly with the same provider: ${alone.us.toFixed(1)} µs/turn (median of 7 rounds)`);
  const result = inMemory.median / 1000;
  console.log(`added by Rein (default set-up, median): ${result.toFixed(1)} µs/turn — target ≤ ${TARGET_US} µs (${result <= TARGET_US ? "met" : "NOT met"})`);
  return result;
}

if (require.main === module) void benchTurnOverhead();
