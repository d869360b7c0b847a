/// <reference types="jest" />
/**
 * What the parts of the store contract suite (`session-store-contract.ts`)
 * share: the store under test and node literals for raw `commit` calls.
 * @internal
 */
import type { SessionNode } from "./session-node";
import type { SessionStoreLike, SessionWriteOperation } from "./session-store-like";

/** The store of the current test, made fresh by the suite before each. @internal */
export interface StoreUnderTest {
  readonly store: SessionStoreLike;
}

/** A node literal for raw `commit` calls. */
export function node(id: string, seq: number, fields: Partial<SessionNode> = {}): SessionNode {
  return {
    id,
    seq,
    createdAt: 1_000 + seq,
    role: "code",
    name: "A.run",
    input: undefined,
    output: undefined,
    caller: null,
    predecessor: null,
    metadata: {},
    ...fields,
  };
}

export const append = (appended: SessionNode): SessionWriteOperation => ({ kind: "append", node: appended });

/** What `call` threw (the test fails when it throws nothing). */
export function thrownBy(call: () => unknown): unknown {
  try {
    call();
  } catch (error) {
    return error;
  }
  throw new Error("expected the call to throw");
}
