/**
 * @rein/core — Agent, Context, Runtime, tools, the Session DAG, and the
 * ModelProvider interface with its test double.
 * @packageDocumentation
 */
export { Agent } from "./agent/agent";
export { isAgentClass } from "./agent/agent-class";
export type { AgentClass } from "./agent/agent-class";
export { agentClassId, DuplicateAgentIdError } from "./agent/agent-id";
export { ChatAgent } from "./agent/chat-agent";
export type { TurnRequest, TurnOptions, TurnResult, TurnStatus, TurnContinuation, ResumeTurnOptions } from "./agent/turns";
export type { AgentOptions, AgentClassDefaults, AskOptions, AgentSpec, AgentToolEntry, ChoiceOptions, Effort, InferOutput } from "./agent/agent";
export { agent } from "./agent/agent-function";
export type { AgentFunctionOptions } from "./agent/agent-function";
export { method } from "./agent/method-decorator";
export type { MethodOptions, Expose } from "./agent/method-options";
export type { ToolApprover } from "./agent/method-tool";
export { Context, DELETE } from "./context/context";
export type { ContextOptions, ContextProvider, ContextHistoryFilter, ForSessionOptions } from "./context/context";
export { Runtime, setDefaultProviderFactory } from "./runtime/runtime";
export type { RuntimeOptions, ExecRequest } from "./runtime/runtime";
export type { ExecResult } from "./runtime/model-tool-loop";
export type { RunEvent, RunEventBody, RunEventSource, RunEventListener, RuntimeEvent, RuntimeEventListener } from "./runtime/runtime-events";
export { RunStream, RUN_STREAM_BUFFER } from "./runtime/run-stream";
export { currentReach, childBudget, withReachBudget, reachFetch } from "./runtime/reach";
// The allow list is reach policy, in @rein/guard; re-exported here, where reachFetch is.
export { setReachOrigins, reachOrigins, mayReceiveBudget } from "@rein/guard";
export { withRunListener } from "./runtime/run-listener";
export { DEFAULT_RESERVED_OUTPUT_TOKENS } from "./runtime/spend-reserver";
export type { SpendReserver, SpendReservation, SpendAmount } from "./runtime/spend-reserver";
export { DEFAULT_CAP_PERIOD_MS, NO_SPEND, checkSpendCaps, capsAnything, currentSpend, microUsd, spendRefusal, windowOf } from "@rein/guard";
export type { SpendCaps, KeySpend, StoredSpend, SpendCapDimension, SpendRefusal } from "@rein/guard";
export { DEFAULT_HOLD_TIMES, liveSpend, startRunStep, reserveStep, settleStep, endRunStep } from "@rein/guard";
export type { SpendHold, HoldTimes, SpendStep } from "@rein/guard";
export type { WithReachBudgetOptions } from "./runtime/reach";
export type { RunResult, RunUsage, RunStatus, Pricing, ModelPrice } from "./runtime/run-result";
export { tool } from "./tools/tool";
export { ToolContent } from "./tools/tool-content";
export { mcpTools } from "./tools/mcp-tools";
export type { McpClientLike, McpToolDescription, McpToolsOptions } from "./tools/mcp-tools";
export type { TelemetryOptions } from "./telemetry/telemetry-options";
export type { Tool } from "./tools/tool";
export type { ToolDefinition, ToolExecuteOptions } from "./tools/tool-definition";
export type { ParametersSchema, StandardSchemaLike } from "./tools/schema";
export { currentSignal, toRecordable } from "./scope/call-scope";
export { addPreInvocationHook, removePreInvocationHook } from "./scope/hooks";
export type { PreInvocationHook, InvocationInfo } from "./scope/hooks";
export * from "./errors";
export * from "./model";
export * from "./session";
export * from "./resumable";
