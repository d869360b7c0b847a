/**
 * A socket fuzz of a real server process (fuzz-server.ts): sends
 * {@link FuzzPlan}s over raw TCP connections, several at once, and counts
 * what came back — each response's status, connections closed with no
 * response, requests that never ended — and reads the server's RSS from
 * /proc. Used by fuzz.test.ts (a few hundred requests) and
 * bench/server-fuzz.ts (10,000, several rounds).
 */
import { spawn, type ChildProcess } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { connect } from "node:net";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { compileScript } from "../../../session/src/__fixtures__/compiled-script";
import type { FuzzAuth, FuzzPlan, HangUp, OversizePlan, RequestPlan } from "./socket-fuzz-plans";

/** A listening fuzz server: where, and its two keys. */
export interface FuzzTarget {
  readonly url: string;
  readonly keys: { readonly a: string; readonly b: string };
}

/** A fuzz server in its own process. */
export interface FuzzServer extends FuzzTarget {
  readonly child: ChildProcess;
  readonly exited: Promise<number | null>;
  /** What the process wrote to stderr (a crash's stack). */
  stderr(): string;
  /** SIGTERM, wait for the exit, remove its store. */
  stop(): Promise<number | null>;
}

const ROOT = resolve(__dirname, "..", "..", "..", "..");

/**
 * Starts fuzz-server.ts, compiled by esbuild into a fresh temp directory (about 0.7 s of CPU to start instead of
 * 1.6 s through tsx: session/src/__fixtures__/compiled-script.ts), on a SQLite store in that directory.
 */
export async function startFuzzServer(): Promise<FuzzServer> {
  const dir = mkdtempSync(join(tmpdir(), "rein-fuzz-"));
  const compiled = compileScript(join(__dirname, "fuzz-server.ts"), dir);
  const child = spawn(process.execPath, [...compiled.nodeArgs], {
    cwd: ROOT,
    env: { ...process.env, ...compiled.env, STORE: join(dir, "sessions.db"), REIN_POLICY_SECRET: "" },
    stdio: ["ignore", "pipe", "pipe"],
  });
  let stdout = "";
  let stderr = "";
  child.stderr!.on("data", (chunk: Buffer) => (stderr += chunk.toString()));
  const exited = new Promise<number | null>((done) => child.once("exit", (code) => done(code)));
  const line = await new Promise<string[]>((found, failed) => {
    child.stdout!.on("data", (chunk: Buffer) => {
      stdout += chunk.toString();
      const match = /listening (\S+) (\S+) (\S+)\n/.exec(stdout);
      if (match) found([match[1]!, match[2]!, match[3]!]);
    });
    void exited.then((code) => failed(new Error(`the fuzz server exited (${code}) before listening: ${stderr}`)));
  });
  return {
    url: line[0]!,
    keys: { a: line[1]!, b: line[2]! },
    child,
    exited,
    stderr: () => stderr,
    stop: async () => {
      if (child.exitCode === null && child.signalCode === null) child.kill("SIGTERM");
      const code = await exited;
      rmSync(dir, { recursive: true, force: true });
      return code;
    },
  };
}

/** A process's resident set now and its peak so far (VmRSS, VmHWM of /proc/<pid>/status), in bytes. */
export function rssOf(pid: number): { rss: number; peak: number } {
  const status = readFileSync(`/proc/${pid}/status`, "utf8");
  const kb = (field: string) => Number(new RegExp(`^${field}:\\s+(\\d+) kB`, "m").exec(status)?.[1] ?? NaN) * 1024;
  return { rss: kb("VmRSS"), peak: kb("VmHWM") };
}

/** What one fuzz request got: the statuses of the responses that began (none when the connection closed first). */
export interface FuzzOutcome {
  readonly plan: FuzzPlan;
  readonly statuses: readonly number[];
  /** The request had not ended after the fuzz's per-request limit (the client then hung up). */
  readonly hung: boolean;
}

/** A fuzz round's counts. */
export interface FuzzReport {
  readonly requests: number;
  /** By status code; `closed` counts connections that ended with no response (the client hung up first, or the server closed). */
  readonly statuses: Readonly<Record<string, number>>;
  /** Every outcome with a 5xx. */
  readonly serverErrors: readonly FuzzOutcome[];
  /** Every request still open after the per-request limit. */
  readonly hung: readonly FuzzOutcome[];
  readonly outcomes: readonly FuzzOutcome[];
}

/** Sends `plans` to `target`, `concurrency` at a time, and counts the outcomes. */
export async function runFuzz(target: FuzzTarget, plans: readonly FuzzPlan[], options: { concurrency?: number; requestLimitMs?: number } = {}): Promise<FuzzReport> {
  const seen: string[] = [];
  const outcomes: FuzzOutcome[] = [];
  let next = 0;
  const worker = async () => {
    while (next < plans.length) {
      const plan = plans[next++]!;
      outcomes.push(await send(target, plan, seen, options.requestLimitMs ?? 30_000));
    }
  };
  await Promise.all(Array.from({ length: options.concurrency ?? 8 }, worker));
  const statuses: Record<string, number> = {};
  for (const outcome of outcomes) {
    const keys = outcome.statuses.length === 0 ? ["closed"] : outcome.statuses.map(String);
    for (const key of keys) statuses[key] = (statuses[key] ?? 0) + 1;
  }
  return {
    requests: outcomes.length,
    statuses,
    serverErrors: outcomes.filter((outcome) => outcome.statuses.some((status) => status >= 500)),
    hung: outcomes.filter((outcome) => outcome.hung),
    outcomes,
  };
}

async function send(target: FuzzTarget, plan: FuzzPlan, seen: string[], limitMs: number): Promise<FuzzOutcome> {
  if (plan.kind === "broken") {
    const { received, hung } = await exchange(target.url, limitMs, async (socket) => {
      socket.write(plan.bytes);
      if (plan.end) socket.end();
    });
    return { plan, statuses: statusesOf(received), hung };
  }
  if (plan.kind === "oversize") {
    const { received, hung } = await exchange(target.url, limitMs, (socket, open) => sendOversize(socket, open, plan, target));
    return { plan, statuses: statusesOf(received), hung };
  }
  const bytes = requestBytes(plan, target, seen);
  const { received, hung } = await exchange(target.url, limitMs, async (socket, open) => {
    const delivery = plan.delivery;
    if (delivery.kind === "whole") socket.write(bytes);
    else if (delivery.kind === "slow") {
      const size = Math.ceil(bytes.length / delivery.pieces);
      for (let start = 0; start < bytes.length && open(); start += size) {
        socket.write(bytes.subarray(start, start + size));
        await new Promise((r) => setTimeout(r, delivery.pauseMs));
      }
    } else {
      socket.write(bytes.subarray(0, Math.max(1, Math.floor(bytes.length * delivery.fraction))));
      // A stalled client waits for the server's timeout; a cut one hangs up mid-request.
      if (delivery.kind === "cut") setImmediate(() => socket.destroy());
      return;
    }
    hangUpAs(plan.hangUp, socket);
  });
  const runId = /\r\nx-run-id: ([^\r\n]+)/i.exec(received)?.[1];
  if (runId !== undefined && (plan.auth === "a" || plan.auth === "b")) seen.push(runId);
  return { plan, statuses: statusesOf(received), hung };
}

function hangUpAs(hangUp: HangUp, socket: import("node:net").Socket): void {
  if (hangUp.kind === "first-bytes") socket.once("data", () => socket.destroy());
  else if (hangUp.kind === "after") setTimeout(() => socket.destroy(), hangUp.ms);
}

/** One connection: `write` sends, then the exchange ends when the socket closes (or after `limitMs`: hung). */
function exchange(
  url: string,
  limitMs: number,
  write: (socket: import("node:net").Socket, open: () => boolean) => Promise<void>,
): Promise<{ received: string; hung: boolean }> {
  const { hostname, port } = new URL(url);
  return new Promise((done) => {
    const socket = connect(Number(port), hostname);
    let received = "";
    let closed = false;
    let hung = false;
    socket.on("data", (chunk: Buffer) => (received += chunk.toString("latin1")));
    socket.on("error", () => undefined);
    const limit = setTimeout(() => ((hung = true), socket.destroy()), limitMs);
    socket.once("close", () => {
      closed = true;
      clearTimeout(limit);
      done({ received, hung });
    });
    socket.once("connect", () => void write(socket, () => !closed && !socket.destroyed).catch(() => socket.destroy()));
  });
}

/** The statuses of every response head received (pipelined requests get several). */
function statusesOf(received: string): number[] {
  return [...received.matchAll(/(?:^|\r\n)HTTP\/1\.[01] (\d{3}) /g)].map((match) => Number(match[1]));
}

const WRONG_KEY = `rein_0123456789abcdef_${"A".repeat(43)}`;

function authHeader(auth: FuzzAuth, target: FuzzTarget): string {
  switch (auth) {
    case "a":
      return `Authorization: Bearer ${target.keys.a}\r\n`;
    case "b":
      return `Authorization: Bearer ${target.keys.b}\r\n`;
    case "wrong":
      return `Authorization: Bearer ${WRONG_KEY}\r\n`;
    case "malformed":
      return "Authorization: Bearer\r\n";
    case "none":
      return "";
  }
}

function pathOf(plan: RequestPlan, seen: readonly string[]): { method: string; path: string } {
  const id = typeof plan.target === "string" ? plan.target : (seen[plan.target.seen % Math.max(1, seen.length)] ?? "no-run-yet");
  switch (plan.route) {
    case "run":
      return { method: "POST", path: "/v1/agent/run" };
    case "runs":
      return { method: "GET", path: plan.query === "" ? "/v1/runs" : `/v1/runs?state=${encodeURIComponent(plan.query)}` };
    case "sessions":
      return { method: "GET", path: `/v1/sessions/${id}` };
    case "graph":
      return { method: "GET", path: `/v1/sessions/${id}/graph` };
    case "run-get":
      return { method: "GET", path: `/v1/runs/${id}` };
    case "cancel":
      return { method: "POST", path: `/v1/runs/${id}/cancel` };
    case "resume":
      return { method: "POST", path: `/v1/runs/${id}/resume` };
    case "approvals":
      return { method: "GET", path: `/v1/runs/${id}/approvals` };
    case "approve":
      return { method: "POST", path: `/v1/runs/${id}/approvals/call-${encodeURIComponent(plan.query.slice(0, 20))}` };
    case "events":
      return { method: "GET", path: "/v1/runs/events" };
    case "healthz":
      return { method: "GET", path: "/healthz" };
    case "unknown":
      return { method: plan.body === undefined ? "GET" : "POST", path: `/v1/nope/${encodeURIComponent(plan.query)}` };
  }
}

function requestBytes(plan: RequestPlan, target: FuzzTarget, seen: readonly string[]): Buffer {
  const { method, path } = pathOf(plan, seen);
  let head = `${method} ${path} HTTP/1.1\r\nHost: fuzz\r\nConnection: close\r\n${authHeader(plan.auth, target)}`;
  head += `Accept: ${plan.sse ? "text/event-stream" : "application/json"}\r\n`;
  if (plan.policy !== undefined) head += `X-Agent-Policy: ${plan.policy}\r\n`;
  if (method === "GET" || plan.body === undefined) return Buffer.from(`${head}\r\n`, "latin1");
  const body = Buffer.from(plan.body, "utf8");
  head += "Content-Type: application/json\r\n";
  if (!plan.chunked) return Buffer.concat([Buffer.from(`${head}Content-Length: ${body.length}\r\n\r\n`, "latin1"), body]);
  const half = Math.floor(body.length / 2);
  const chunk = (part: Buffer) => (part.length === 0 ? [] : [Buffer.from(`${part.length.toString(16)}\r\n`), part, Buffer.from("\r\n")]);
  return Buffer.concat([Buffer.from(`${head}Transfer-Encoding: chunked\r\n\r\n`, "latin1"), ...chunk(body.subarray(0, half)), ...chunk(body.subarray(half)), Buffer.from("0\r\n\r\n")]);
}

const FILLER = Buffer.alloc(16 * 1024, "x");

/** Sends a body of `plan.bytes`, 16 KB at a time, waiting for the socket to drain, until sent or the server stops it. */
async function sendOversize(socket: import("node:net").Socket, open: () => boolean, plan: OversizePlan, target: FuzzTarget): Promise<void> {
  let head = `POST /v1/agent/run HTTP/1.1\r\nHost: fuzz\r\nConnection: close\r\n${authHeader(plan.auth, target)}Content-Type: application/json\r\n`;
  head += plan.chunked ? "Transfer-Encoding: chunked\r\n\r\n" : `Content-Length: ${plan.bytes}\r\n\r\n`;
  socket.write(head);
  socket.write(plan.chunked ? `b\r\n{"entry":"r\r\n` : `{"entry":"r`);
  let answered = false;
  socket.once("data", () => (answered = true));
  for (let sent = 0; sent < plan.bytes && open() && !answered; sent += FILLER.length) {
    const piece = FILLER.subarray(0, Math.min(FILLER.length, plan.bytes - sent));
    const flushed = plan.chunked ? socket.write(`${piece.length.toString(16)}\r\n`) && socket.write(piece) && socket.write("\r\n") : socket.write(piece);
    if (!flushed) await new Promise<void>((drained) => (socket.once("drain", drained), socket.once("close", drained)));
  }
  if (plan.finish && plan.chunked && open() && !answered) socket.write("0\r\n\r\n");
}
