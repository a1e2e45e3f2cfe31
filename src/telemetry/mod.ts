/**
 * Operator logs and OpenTelemetry export: what an operator sees of a running
 * server besides the audit log. Logs go to stderr only (stdout is the MCP
 * channel in stdio mode); the export is off unless `[telemetry]` is set.
 * Neither ever carries command output; arguments only redacted.
 *
 * @module
 */
export {
  configureOperatorLog,
  createLogger,
  DEFAULT_LOG_SETTINGS,
  lineSink,
  type LogFields,
  type Logger,
  type LogValue,
  operatorLog,
} from "./log.ts";
export {
  parseTraceparent,
  parseTracestate,
  type TraceContext,
  traceContextFromMeta,
} from "../audit/trace_context.ts";
export { currentTraceparent, noteRequestClient } from "./call_scope.ts";
export {
  type CallRecord,
  type CallVerdict,
  outcomeOf,
  redactedArguments,
  TOOL_ERROR,
} from "./call_record.ts";
export {
  startTelemetry,
  stopTelemetry,
  telemetry,
  type TelemetrySink,
  type TelemetrySources,
} from "./sink.ts";
export {
  instrumentToolCalls,
  type ObservedCaller,
  type ObservedServer,
  UNKNOWN_TOOL,
} from "./instrument_tools.ts";
export { type RequestHandler, withRequestLog } from "./request_log.ts";
// The settings and the redactor the functions above take, so the surface is complete.
export type { LogLevel, LogSettings, TelemetrySettings } from "../config/types.ts";
export type { Redactor } from "../redact/mod.ts";
