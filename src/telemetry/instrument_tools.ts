/**
 * One observation point for every tool call of one MCP server instance: the
 * SDK's `tools/call` handler is wrapped as it is installed, so every tool
 * (those registered now and those added later) gets, without a line of its
 * own, the operator log line, the span and the metrics, and runs inside a
 * call scope that carries the client's checked trace context down to the
 * audit log's attempt record.
 *
 * Observation never changes a call: the handler's result or error passes
 * through untouched, and a failure while logging or exporting is swallowed.
 * The line and the span are made just after the answer, not before it.
 *
 * @module
 */
import { CallToolRequestSchema } from "@modelcontextprotocol/sdk/types.js";
import type { LogLevel } from "../config/types.ts";
import type { Redactor } from "../redact/mod.ts";
import { type CallRecord, outcomeOf, redactedArguments } from "./call_record.ts";
import { withCallScope } from "./call_scope.ts";
import { operatorLog } from "./log.ts";
import { telemetry } from "./sink.ts";
import { after } from "../timers/mod.ts";
import { traceContextFromMeta } from "../audit/trace_context.ts";

/** Exported in place of a tool name no tool is registered under (bounds the label set). */
export const UNKNOWN_TOOL = "_unknown";

/** Codes that mean the server itself is at fault: logged as errors, not warnings. */
const SERVER_FAULTS: ReadonlySet<string> = new Set([
  "INTERNAL_ERROR",
  "EXECUTOR_ERROR",
  "CONTAINMENT_UNAVAILABLE",
  "AUDIT_UNAVAILABLE",
  "tool_error",
]);

type Handler = (request: unknown, extra: unknown) => unknown;

/**
 * The two seams of an SDK `McpServer` the observation wraps, and nothing
 * more: an `McpServer` is one, so the SDK's large class stays out of this
 * module's surface.
 */
export interface ObservedServer {
  /** Wrapped so the names of registered tools are known (the label set stays bounded). */
  registerTool: (name: string, ...rest: never[]) => unknown;
  /** The protocol server, whose `tools/call` handler is wrapped as it is installed. */
  readonly server: {
    /** Installs a request handler; wrapped for `tools/call` only. */
    setRequestHandler: (...args: never[]) => unknown;
  };
}

/**
 * Who an instrumented server instance serves, as its log lines and spans
 * name it: a transport's caller identity is one.
 */
export type ObservedCaller = Pick<CallRecord, "transport" | "clientId">;

/**
 * Observes every tool call of `server`. Call it right after creating the
 * server, before any tool is registered: the `tools/call` handler is
 * wrapped when the SDK installs it, on the first registration.
 *
 * @param server The SDK server (an `McpServer`).
 * @param redactor The policy's redactor, for the arguments.
 * @param caller Who this instance serves.
 *
 * @example
 * ```ts
 * import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
 * import type { Redactor } from "../redact/mod.ts";
 * import { instrumentToolCalls } from "./instrument_tools.ts";
 * declare const redactor: Redactor;
 * const server = new McpServer({ name: "htmcp", version: "0.1.0" });
 * instrumentToolCalls(server, redactor, { transport: "stdio", clientId: null });
 * server.registerTool("ping", {}, () => ({ content: [{ type: "text", text: "pong" }] }));
 * ```
 */
export function instrumentToolCalls(
  server: ObservedServer,
  redactor: Redactor,
  caller: ObservedCaller,
): void {
  // Names come from registration, not from the request: a client's made-up
  // tool names must not grow the metrics' label sets without bound.
  const registered = new Set<string>();
  const register = server.registerTool.bind(server);
  server.registerTool = ((name: string, ...rest: unknown[]) => {
    registered.add(name);
    return (register as (name: string, ...rest: unknown[]) => unknown)(name, ...rest);
  }) as typeof server.registerTool;

  // A tool registered another way (server.tool, registerToolTask) is still
  // named: the SDK's own table of registered tools is consulted too.
  const sdkTable = (server as unknown as { _registeredTools?: unknown })._registeredTools;
  const isRegistered = (name: string) =>
    registered.has(name) ||
    (typeof sdkTable === "object" && sdkTable !== null && Object.hasOwn(sdkTable, name));

  const inner = server.server;
  const install = inner.setRequestHandler.bind(inner) as (schema: unknown, h: Handler) => void;
  inner.setRequestHandler = ((schema: unknown, handler: Handler) =>
    install(
      schema,
      schema === CallToolRequestSchema
        ? observed(handler, isRegistered, redactor, caller)
        : handler,
    )) as unknown as typeof inner.setRequestHandler;
}

function observed(
  handler: Handler,
  isRegistered: (name: string) => boolean,
  redactor: Redactor,
  caller: ObservedCaller,
): Handler {
  return async (request, extra) => {
    const params = field(request, "params");
    const rawName = field(params, "name");
    const tool = typeof rawName === "string" && isRegistered(rawName) ? rawName : UNKNOWN_TOOL;
    const trace = traceContextFromMeta(field(params, "_meta"));
    const startedAt = Date.now();
    const started = performance.now();
    safely(() => telemetry().callStarted(tool));
    // Set by the try or the catch before the finally reads it. No placeholder
    // Error: capturing its stack cost about 0.05 ms of every call.
    let result!: { ok: true; value: unknown } | { ok: false; error: unknown };
    try {
      const value = await withCallScope({ trace }, () => handler(request, extra));
      result = { ok: true, value };
      return value;
    } catch (error) {
      result = { ok: false, error };
      throw error;
    } finally {
      const durationMs = Math.round((performance.now() - started) * 1000) / 1000;
      // Reported in the next task, once the answer is on its way: the line's
      // formatting and redaction and the span's export are the operator's,
      // not the client's wait (about 0.1 ms of every call's round trip). The
      // duration is the call's own, taken above.
      after(0, () =>
        safely(() => {
          const outcome = outcomeOf(result);
          const level = levelOf(outcome.verdict, outcome.code);
          // Redaction has a cost: only when a line or a span will show the arguments.
          const shown = telemetry().enabled || operatorLog().enabled(level);
          report(level, {
            tool,
            transport: caller.transport,
            clientId: caller.clientId,
            sessionId: stringOrNull(field(extra, "sessionId")),
            requestId: String(field(extra, "requestId") ?? ""),
            ...outcome,
            startedAt,
            durationMs,
            trace,
            arguments: shown ? redactedArguments(field(params, "arguments"), redactor) : null,
          });
        }));
    }
  };
}

function levelOf(verdict: CallRecord["verdict"], code: string): LogLevel {
  if (verdict === "ok") return "info";
  return SERVER_FAULTS.has(code) ? "error" : "warn";
}

function report(level: LogLevel, record: CallRecord): void {
  const traceId = telemetry().callEnded(record) ?? record.trace?.traceId ?? undefined;
  operatorLog().write(level, "tool_call", `tools/call ${record.tool}: ${record.code}`, {
    transport: record.transport,
    client_id: record.clientId,
    session_id: record.sessionId ?? undefined,
    tool: record.tool,
    code: record.code,
    verdict: record.verdict,
    exit: record.exitCode,
    duration_ms: record.durationMs,
    trace_id: traceId,
    args: record.arguments ?? undefined,
  });
}

/** Reads one property of an untrusted value, or undefined. */
function field(value: unknown, key: string): unknown {
  if (typeof value !== "object" || value === null) return undefined;
  try {
    return (value as Record<string, unknown>)[key];
  } catch {
    return undefined;
  }
}

function stringOrNull(value: unknown): string | null {
  return typeof value === "string" && value !== "" ? value : null;
}

function safely(fn: () => void): void {
  try {
    fn();
  } catch {
    // Observation must never break a call; the audit log is the record.
  }
}
