/**
 * What the operator log and the telemetry export keep of one tool call:
 * codes, counts, ids, the duration, and the arguments redacted. Never the
 * result's output: `recordOf` reads only `isError`, `structuredContent.code`
 * and `structuredContent.exit_code` from a tool result, so a stdout that
 * happens to hold a secret has no way into a log line, a span or a metric.
 *
 * Pure: the caller passes the redactor.
 *
 * @module
 */
import { redactArgv, type Redactor } from "../redact/mod.ts";
import type { TraceContext } from "../audit/trace_context.ts";

/** How a call ended, for dashboards: it ran, it was refused before running, or it failed. */
export type CallVerdict = "ok" | "refused" | "failed";

/**
 * Codes that mean "refused before anything ran": a check said no (policy,
 * jail, scope, the concurrency cap, the runtime's permission layer), or the
 * audit log could not record the attempt, so it was not allowed to run.
 */
const REFUSAL_CODES: ReadonlySet<string> = new Set([
  "POLICY_DENIED",
  "PARSE_ERROR",
  "CWD_ESCAPE",
  "PATH_ESCAPE",
  "BUSY",
  "SCOPE_DENIED",
  "RUNTIME_DENIED",
  "AUDIT_UNAVAILABLE",
]);

/** The `error.type` of a tool result that says it failed but carries no code (MCP semconv). */
export const TOOL_ERROR = "tool_error";

/** A result code as exported: one of ours, or a made-up word when the result had none. */
const CODE_SHAPE = /^[A-Z][A-Z0-9_]{0,63}$/;

/** One finished tool call. */
export interface CallRecord {
  /** The registered tool name, or `UNKNOWN_TOOL` (so clients cannot grow the label set). */
  readonly tool: string;
  /** How the client reached this server. */
  readonly transport: "stdio" | "http";
  /** The caller's OAuth client id; null on stdio or without OAuth. */
  readonly clientId: string | null;
  /** The MCP session id over HTTP; null when there is none. */
  readonly sessionId: string | null;
  /** The JSON-RPC request id, as text, to find the call in a client's own logs. */
  readonly requestId: string;
  /** The result code (`structuredContent.code`), `OK`, or `tool_error`. */
  readonly code: string;
  /** How the call ended, from `code`. */
  readonly verdict: CallVerdict;
  /** Set for refused and failed calls, so they never look healthy. */
  readonly errorType: string | null;
  /** The command's exit status when one ran to an end; null otherwise. */
  readonly exitCode: number | null;
  /** Wall time, epoch milliseconds. */
  readonly startedAt: number;
  /** How long the handler took, in milliseconds. */
  readonly durationMs: number;
  /** The client's checked W3C trace context from the call's `_meta`, or null. */
  readonly trace: TraceContext | null;
  /** The arguments as JSON text, every string redacted; null when none. */
  readonly arguments: string | null;
}

/**
 * Classifies a tool's answer.
 *
 * @param result What the tool handler returned (any value), or the error it threw.
 * @returns The code, verdict, `error.type` and exit status.
 */
export function outcomeOf(
  result: { readonly ok: true; readonly value: unknown } | {
    readonly ok: false;
    readonly error: unknown;
  },
): Pick<CallRecord, "code" | "verdict" | "errorType" | "exitCode"> {
  if (!result.ok) {
    // A throw becomes a JSON-RPC error or an SDK-made error result: failed.
    const name = result.error instanceof Error ? result.error.name : "";
    const errorType = CODE_SHAPE.test(name) || /^[A-Za-z][A-Za-z0-9_]{0,63}$/.test(name)
      ? name
      : TOOL_ERROR;
    return { code: TOOL_ERROR, verdict: "failed", errorType, exitCode: null };
  }
  const value = isObject(result.value) ? result.value : {};
  const isError = value["isError"] === true;
  const structured = isObject(value["structuredContent"]) ? value["structuredContent"] : {};
  const rawCode = structured["code"];
  const code = typeof rawCode === "string" && CODE_SHAPE.test(rawCode)
    ? rawCode
    : isError
    ? TOOL_ERROR
    : "OK";
  const rawExit = structured["exit_code"];
  const exitCode = typeof rawExit === "number" && Number.isInteger(rawExit) ? rawExit : null;
  // A result without isError answered the question (explain_command's
  // verdict code included): the call itself succeeded.
  if (!isError) return { code, verdict: "ok", errorType: null, exitCode };
  const verdict: CallVerdict = REFUSAL_CODES.has(code) ? "refused" : "failed";
  return { code, verdict, errorType: code, exitCode };
}

/** Strings longer than this are not redacted and shown, only counted. */
const MAX_REDACTED_CHARS = 16 * 1024;
/** Each shown string is cut to this many characters, after redaction. */
const MAX_SHOWN_CHARS = 512;
const MAX_KEYS = 16;
const MAX_WORDS = 64;

/**
 * The arguments as JSON text with every string redacted by the policy's
 * redactor (an argv as a whole, so `--password VALUE` hides VALUE), then cut.
 * Redaction comes before the cut, so a cut can never split a secret in two
 * and leave the redactor unable to see one half. `stdin` is data, not an
 * argument: only its length is kept.
 *
 * @param args The raw `arguments` of the request (any value).
 * @param redactor The policy's redactor.
 * @returns The JSON text, or null when there are no arguments.
 */
export function redactedArguments(args: unknown, redactor: Redactor): string | null {
  if (!isObject(args)) return null;
  const shown: Record<string, unknown> = {};
  for (const key of Object.keys(args).slice(0, MAX_KEYS)) {
    const value = args[key];
    if (key === "stdin" && typeof value === "string") {
      shown[key] = `[${value.length} chars]`;
    } else if (typeof value === "string") {
      shown[key] = redactedString(value, redactor);
    } else if (Array.isArray(value) && value.every((word) => typeof word === "string")) {
      const words = value.slice(0, MAX_WORDS) as string[];
      shown[key] = words.some((word) => word.length > MAX_REDACTED_CHARS)
        ? `[${value.length} words]`
        : redactArgv(redactor, words).map((word) => cut(word));
    } else if (typeof value === "number" || typeof value === "boolean" || value === null) {
      shown[key] = value;
    } else {
      shown[key] = "[not shown]";
    }
  }
  return JSON.stringify(shown);
}

function redactedString(value: string, redactor: Redactor): string {
  if (value.length > MAX_REDACTED_CHARS) return `[${value.length} chars]`;
  return cut(redactor.redact(value));
}

function cut(text: string): string {
  return text.length > MAX_SHOWN_CHARS ? `${text.slice(0, MAX_SHOWN_CHARS)}...` : text;
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}
