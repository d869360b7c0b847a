import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Context } from "../context/context";
import { SessionMismatchError } from "@rein/guard";
import type { ModelRequest } from "../model/model-provider";
import { ScriptedProvider } from "../model/scripted-provider";
import { Runtime } from "../runtime/runtime";
import { InMemorySessionStore } from "@rein/session";
import { SessionStore } from "@rein/session";
import { ChatAgent } from "./chat-agent";

/** An operator that checks, then deploys (which needs a person's approval; no approver is configured). */
class Operator extends ChatAgent {
  static methodOptions = {
    check: { tool: true, description: "Check the service." },
    deploy: { tool: true, description: "Deploy the service.", requiresApproval: true },
  };
  static runs = { check: 0, deploy: 0 };
  check(service: string): string {
    Operator.runs.check++;
    return `${service} is healthy`;
  }
  deploy(service: string): string {
    Operator.runs.deploy++;
    return `${service} deployed`;
  }
}

/** Checks and deploys in one assistant turn, then answers with the last tool result it got. */
function operatorModel(): ScriptedProvider {
  return new ScriptedProvider(
    [
      { toolCalls: [{ name: "check", input: { service: "api" } }, { name: "deploy", input: { service: "api" } }] },
      (request: ModelRequest) => {
        const results = request.messages.at(-1)!.content.filter((block) => block.type === "tool_result");
        return `Done: ${results.map((block) => String((block as { content: unknown }).content)).join("; ")}`;
      },
    ],
    { whenExhausted: "repeat-last" },
  );
}

beforeEach(() => {
  Operator.runs = { check: 0, deploy: 0 };
});

describe("paused turns", () => {
  it("a call that needs approval pauses the turn before it runs; the continuation is plain JSON naming the call", async () => {
    const model = operatorModel();
    const operator = new Operator({ runtime: new Runtime({ provider: model }) });
    const turn = await operator.chat("Deploy api.");
    expect(turn.status).toBe("paused");
    expect(turn.continuation).toMatchObject({ version: 1, reason: "approval", awaiting: { toolName: "deploy", input: { service: "api" } } });
    expect(JSON.parse(JSON.stringify(turn.continuation))).toEqual(turn.continuation);
    expect(Operator.runs).toEqual({ check: 1, deploy: 0 });
    expect(model.requests).toHaveLength(1);
  });

  it("resumeTurn({ approve: true }) runs the call once and goes on: nothing is asked or run twice", async () => {
    const model = operatorModel();
    const operator = new Operator({ runtime: new Runtime({ provider: model }) });
    const paused = await operator.chat("Deploy api.");
    const done = await operator.resumeTurn(paused.continuation!, { approve: true });
    expect(done).toMatchObject({ status: "completed", text: "Done: api is healthy; api deployed", sessionId: paused.sessionId });
    expect(Operator.runs).toEqual({ check: 1, deploy: 1 });
    expect(model.requests).toHaveLength(2);
    // The request after the resume: the paused assistant turn, then both results, in order.
    const [assistant, results] = model.requests[1]!.messages.slice(-2);
    expect(assistant!.content.filter((block) => block.type === "tool_use").map((block) => (block as { name: string }).name)).toEqual(["check", "deploy"]);
    expect(results!.content.filter((block) => block.type === "tool_result")).toHaveLength(2);
    // The conversation goes on from where the resumed turn ended.
    const next = await operator.chat("Thanks.");
    expect(next.status).toBe("completed");
  });

  it("a resumeTurn cancelled before it carried anything on hands back the same pause under a new id: resumed with it, the call runs once; the old one stays spent", async () => {
    const model = operatorModel();
    const operator = new Operator({ runtime: new Runtime({ provider: model }) });
    const paused = await operator.chat("Deploy api.");
    const controller = new AbortController();
    controller.abort(new Error("the person closed the page"));
    const cancelled = await operator.resumeTurn(paused.continuation!, { approve: true, signal: controller.signal });
    expect(cancelled.status).toBe("cancelled");
    expect(Operator.runs.deploy).toBe(0);
    const again = cancelled.continuation!;
    expect(again).toEqual({ ...paused.continuation!, id: expect.any(String) });
    expect(again.id).not.toBe(paused.continuation!.id);
    await expect(operator.resumeTurn(paused.continuation!, { approve: true })).rejects.toMatchObject({ name: "ContinuationConsumedError" });
    const done = await operator.resumeTurn(again, { approve: true });
    expect(done).toMatchObject({ status: "completed", text: "Done: api is healthy; api deployed" });
    expect(Operator.runs).toEqual({ check: 1, deploy: 1 });
  });

  it("a resumeTurn that failed after it carried the turn on hands back no continuation: the approved call ran, it is never run twice", async () => {
    const providerDown = (): string => {
      throw new Error("provider down");
    };
    const model = new ScriptedProvider([{ toolCalls: [{ name: "deploy", input: { service: "api" } }] }, providerDown], { whenExhausted: "repeat-last" });
    const operator = new Operator({ runtime: new Runtime({ provider: model }) });
    const paused = await operator.chat("Deploy api.");
    const failed = await operator.resumeTurn(paused.continuation!, { approve: true });
    expect(failed.status).toBe("error");
    expect(Operator.runs.deploy).toBe(1);
    expect(failed.continuation).toBeUndefined();
  });

  it("resumeTurn({ approve: false }) never runs the call; the model is told it was not approved", async () => {
    const model = operatorModel();
    const operator = new Operator({ runtime: new Runtime({ provider: model }) });
    const paused = await operator.chat("Deploy api.");
    const done = await operator.resumeTurn(paused.continuation!, { approve: false });
    expect(done.text).toBe("Done: api is healthy; Calling 'deploy' was not approved; do not call it again for this.");
    expect(Operator.runs).toEqual({ check: 1, deploy: 0 });
  });

  it("resumes in another process on the same store: a new store instance and agent, the continuation as JSON", async () => {
    const directory = mkdtempSync(join(tmpdir(), "rein-resume-"));
    try {
      const path = join(directory, "sessions.db");
      const first = new SessionStore({ path, shutdownFlush: false });
      const paused = await new Operator({ runtime: new Runtime({ provider: operatorModel() }), context: Context.forSession(first, "ops") }).chat("Deploy api.");
      first.close();
      const saved = JSON.stringify(paused.continuation);

      const second = new SessionStore({ path, shutdownFlush: false });
      try {
        const model = new ScriptedProvider(["Deployed, as you approved."]);
        const operator = new Operator({ runtime: new Runtime({ provider: model }), context: Context.forSession(second, "ops") });
        const done = await operator.resumeTurn(JSON.parse(saved), { approve: true });
        expect(done).toMatchObject({ status: "completed", text: "Deployed, as you approved.", sessionId: "ops" });
        expect(Operator.runs).toEqual({ check: 1, deploy: 1 });
        // One request in the new process: the paused one is not asked again. Its history holds the first prompt.
        expect(model.requests).toHaveLength(1);
        expect(JSON.stringify(model.requests[0]!.messages)).toContain("Deploy api.");
        const deployNodes = second.readNodes("ops").filter((node) => node.name === "Operator.deploy");
        expect(deployNodes).toHaveLength(1);
        expect(deployNodes[0]!.metadata["status"]).toBe("completed");
      } finally {
        second.close();
      }
    } finally {
      rmSync(directory, { recursive: true, force: true });
    }
  });

  it("a continuation for another session is a SessionMismatchError before anything runs; a malformed one is a TypeError", async () => {
    const operator = new Operator({ runtime: new Runtime({ provider: operatorModel() }) });
    const paused = await operator.chat("Deploy api.");
    const elsewhere = Context.forSession(new InMemorySessionStore(), "other");
    await expect(operator.resumeTurn(paused.continuation!, { approve: true, context: elsewhere })).rejects.toBeInstanceOf(SessionMismatchError);
    await expect(operator.resumeTurn({} as never, { approve: true })).rejects.toThrow(/continuation/);
    await expect(operator.resumeTurn(paused.continuation!, {} as never)).rejects.toThrow(/approve/);
    expect(Operator.runs.deploy).toBe(0);
  });

  it("outside a turn (ask), a call that needs approval with no approver is still a tool error the model sees", async () => {
    const model = operatorModel();
    const operator = new Operator({ runtime: new Runtime({ provider: model }) });
    await expect(operator.ask("Deploy api.")).resolves.toMatch(/Done: api is healthy; .*requires approval/);
    expect(Operator.runs.deploy).toBe(0);
  });
});

describe("agent.pause()", () => {
  class Writer extends ChatAgent {
    static methodOptions = { draft: { tool: true, description: "Write a draft." } };
    static drafts = 0;
    draft(): string {
      Writer.drafts++;
      // A person asks to look at the draft before the agent goes on.
      this.pause();
      return "draft 1";
    }
  }

  it("pauses the running turn at its next safe point (after the step's calls, before the next request); resumeTurn goes on without repeating anything", async () => {
    Writer.drafts = 0;
    const model = new ScriptedProvider([{ toolCalls: [{ name: "draft" }] }, "Here is the final text."]);
    const writer = new Writer({ runtime: new Runtime({ provider: model }) });
    const paused = await writer.chat("Write it.");
    expect(paused).toMatchObject({ status: "paused", continuation: { reason: "pause" } });
    expect(paused.continuation!.awaiting).toBeUndefined();
    expect(model.requests).toHaveLength(1);
    expect(Writer.drafts).toBe(1);
    const done = await writer.resumeTurn(paused.continuation!, {});
    expect(done).toMatchObject({ status: "completed", text: "Here is the final text." });
    expect(model.requests).toHaveLength(2);
    expect(Writer.drafts).toBe(1);
    expect(model.requests[1]!.messages.at(-1)!.content[0]).toMatchObject({ type: "tool_result", content: "draft 1" });
  });

  it("resuming an approval without an answer is a TypeError saying what to pass", async () => {
    const operator = new Operator({ runtime: new Runtime({ provider: operatorModel() }) });
    const paused = await operator.chat("Deploy api.");
    await expect(operator.resumeTurn(paused.continuation!, {})).rejects.toThrow(/approve: true/);
  });
});
