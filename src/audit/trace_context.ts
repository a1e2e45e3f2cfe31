/**
 * W3C Trace Context from a request's `_meta` (`traceparent`, `tracestate`),
 * as MCP clients send it. The values are the client's, so they are checked
 * against the W3C grammar before anything uses them: a value that does not
 * match is ignored and never echoed (not in the audit log, not in a span, not
 * in the operator log), because it could be any text the client chose.
 *
 * @module
 */

/**
 * `traceparent` version 00: `00-<32 hex trace-id>-<16 hex parent-id>-<2 hex flags>`,
 * lowercase. The spec: "Vendors MUST ignore the traceparent when the trace-id
 * is invalid (for example, if it contains non-lowercase hex characters)", and
 * an all-zero trace-id or parent-id "is considered an invalid value".
 */
const TRACEPARENT = /^00-([0-9a-f]{32})-([0-9a-f]{16})-([0-9a-f]{2})$/;

/** `tracestate`: at most 32 list members, 512 characters here (the spec's advised minimum). */
const TRACESTATE_MAX_CHARS = 512;
const TRACESTATE_MEMBER =
  /^(?:[a-z][a-z0-9_\-*/]{0,255}|[a-z0-9][a-z0-9_\-*/]{0,240}@[a-z][a-z0-9_\-*/]{0,13})=[\x20-\x2b\x2d-\x3c\x3e-\x7e]{0,255}[\x21-\x2b\x2d-\x3c\x3e-\x7e]$/;

/** A checked trace context. */
export interface TraceContext {
  /** The whole checked `traceparent` header value, as the client sent it. */
  readonly traceparent: string;
  /** Its 32 hex digits of trace id (never all zero). */
  readonly traceId: string;
  /** Its 16 hex digits of parent span id (never all zero). */
  readonly parentId: string;
  /** The checked `tracestate`, or null when absent or malformed. */
  readonly tracestate: string | null;
}

/**
 * Checks a `traceparent` value.
 *
 * @param value Anything the client sent.
 * @returns The parsed value, or null when it is not a valid version-00 traceparent.
 *
 * @example
 * ```ts
 * import { parseTraceparent } from "./trace_context.ts";
 * parseTraceparent("00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01")?.traceId;
 * // "0af7651916cd43dd8448eb211c80319c"
 * parseTraceparent("00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01\nforged"); // null
 * ```
 */
export function parseTraceparent(
  value: unknown,
): { traceparent: string; traceId: string; parentId: string } | null {
  if (typeof value !== "string") return null;
  const match = TRACEPARENT.exec(value);
  if (match === null) return null;
  const traceId = match[1] as string;
  const parentId = match[2] as string;
  if (/^0+$/.test(traceId) || /^0+$/.test(parentId)) return null;
  return { traceparent: value, traceId, parentId };
}

/**
 * Checks a `tracestate` value; null when absent or not a valid list.
 *
 * @param value The `tracestate` as received (any value).
 * @returns The list members, trimmed and joined by `,`; null when it is not
 *   a string of at most 32 valid members within the length limit.
 */
export function parseTracestate(value: unknown): string | null {
  if (typeof value !== "string" || value.length === 0 || value.length > TRACESTATE_MAX_CHARS) {
    return null;
  }
  const members = value.split(",").map((member) => member.trim()).filter((m) => m !== "");
  if (members.length === 0 || members.length > 32) return null;
  return members.every((member) => TRACESTATE_MEMBER.test(member)) ? members.join(",") : null;
}

/**
 * Reads the trace context from a request's `_meta`, once.
 *
 * @param meta `params._meta` as received (any value).
 * @returns The checked context, or null when there is no valid `traceparent`
 *   (a `tracestate` without a valid `traceparent` is ignored, as the spec says).
 */
export function traceContextFromMeta(meta: unknown): TraceContext | null {
  if (typeof meta !== "object" || meta === null) return null;
  let rawParent: unknown;
  let rawState: unknown;
  try {
    // One read of each key: a getter cannot show one value to the check and
    // another to the use.
    rawParent = (meta as Record<string, unknown>)["traceparent"];
    rawState = (meta as Record<string, unknown>)["tracestate"];
  } catch {
    return null;
  }
  const parent = parseTraceparent(rawParent);
  if (parent === null) return null;
  return { ...parent, tracestate: parseTracestate(rawState) };
}
