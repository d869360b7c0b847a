/**
 * OpenTelemetry settings of a {@link Runtime} (its `telemetry` option).
 * Spans are made only when the app registers an OpenTelemetry SDK; with
 * the API alone Rein makes none.
 * @example
 * ```ts
 * const runtime = new Runtime({ telemetry: { captureContent: true } });
 * ```
 */
export interface TelemetryOptions {
  /**
   * Put message content on spans: `gen_ai.system_instructions`,
   * `gen_ai.input.messages`, `gen_ai.output.messages`, `gen_ai.tool.definitions`
   * on `chat` spans and `gen_ai.tool.call.arguments` / `gen_ai.tool.call.result`
   * on `execute_tool` spans. Off by default: prompts and tool data often
   * hold personal or secret data, and a tracing backend is rarely the place for it.
   * @default false
   */
  readonly captureContent?: boolean;
}
