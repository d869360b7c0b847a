import type { SessionNode, SessionStoreLike, SessionWriteOperation } from "rein";

/**
 * Writes a session of `count` nodes: a root code node `Planner.plan` whose
 * calls alternate an llm request and a `Worker.step` code node, in one commit.
 * The tenth tool round's llm node carries a loop-warning notice in its input.
 */
export function writeLargeSession(store: SessionStoreLike, sessionId: string, count: number): void {
  store.createSession(sessionId, { agentId: "Planner", title: `${count} nodes` });
  const now = Date.now();
  const operations: SessionWriteOperation[] = [];
  const node = (seq: number, fields: Partial<SessionNode> & Pick<SessionNode, "id" | "role" | "name">): SessionNode => ({
    seq,
    createdAt: now + seq,
    input: null,
    output: null,
    caller: null,
    predecessor: null,
    metadata: { status: "completed" },
    ...fields,
  });
  operations.push({ kind: "append", node: node(0, { id: "n0", role: "code", name: "Planner.plan", input: { task: "plan" } }) });
  for (let seq = 1; seq < count; seq++) {
    const llm = seq % 2 === 1;
    operations.push({
      kind: "append",
      node: node(seq, {
        id: `n${seq}`,
        role: llm ? "llm" : "code",
        name: llm ? "scripted" : "Worker.step",
        caller: "n0",
        predecessor: seq === 1 ? null : `n${seq - 1}`,
        input: llm ? { content: [{ type: "text", text: `step ${seq}` }] } : { index: seq },
        output: llm ? { content: [{ type: "text", text: `answer ${seq}` }] } : `done ${seq}`,
        metadata: llm ? { status: "completed", usage: { inputTokens: 10, outputTokens: 2 } } : { status: "completed", durationMs: 3 },
      }),
    });
  }
  store.commit(sessionId, operations);
}
