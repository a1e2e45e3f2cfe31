/**
 * `audit_tail`: the caller's own recent audit records, as written.
 *
 * Threat answered: the log says who ran what, where, with which client id;
 * one client reading another's records learns its commands and working
 * directories. So a caller sees only records that name it as the audit
 * names callers: the OAuth `client_id` over HTTP; on stdio (and
 * unauthenticated loopback HTTP, where callers have no id) the records of
 * this server process (`writer`) with no client id. `audit:full` widens that
 * to every record, for an operator's client; it is never implied, not even
 * on stdio where all other tools are open. The records are the log's own
 * lines, redacted when they were written; nothing is added, and output
 * never was in the log.
 *
 * The call is itself audited first (`audit_read`), and its own record, the
 * HTTP layer's `tool_call` record for it, and anything after are left out,
 * so the answer is the log as it stood when the call arrived.
 *
 * Off unless `[audit] expose_to_model = true` (the tool is then not even listed).
 *
 * @module
 */
import * as z from "zod";
import type { ServerContext } from "../context/mod.ts";
import { type CallerIdentity, hasScope } from "./caller.ts";
import { readRecentRecords } from "../audit/read_recent.ts";
import { INTERNAL_ERROR_REASON } from "./internal_error.ts";

declare module "../audit/mod.ts" {
  interface AuditEventFields {
    /** An `audit_tail` call: who asked, for how many, and whose records. */
    audit_read: {
      readonly client_id: string | null;
      readonly call_id: string;
      readonly limit: number;
      readonly scope: "own" | "all";
      /** `OK`, or `SCOPE_DENIED` for a caller without `audit:read`. */
      readonly result_code: "OK" | "SCOPE_DENIED";
    };
  }
}

/** Most records one call returns. */
export const MAX_TAIL_RECORDS = 50;
/** Records when `limit` is not given. */
export const DEFAULT_TAIL_RECORDS = 20;
/** Most bytes of record lines one call returns (clients cut long results). */
export const MAX_TAIL_BYTES = 48 * 1024;
/** Most bytes of the log one call reads, however sparse the caller's records. */
export const MAX_TAIL_SCAN_BYTES = 16 * 1024 * 1024;

export const AUDIT_TAIL_DESCRIPTION =
  `Your own most recent audit records (your calls: attempts, outcomes, refusals), oldest first, ` +
  `as the server logged them (redacted; never command output). limit: 1-${MAX_TAIL_RECORDS} ` +
  `(default ${DEFAULT_TAIL_RECORDS}).`;

export const AUDIT_TAIL_INPUT = {
  limit: z.number().int().min(1).max(MAX_TAIL_RECORDS).optional().describe(
    `How many records, newest ones (1-${MAX_TAIL_RECORDS}, default ${DEFAULT_TAIL_RECORDS}).`,
  ),
};

export const AUDIT_TAIL_SHAPE = {
  ok: z.boolean(),
  code: z.string(),
  reason: z.string(),
  scope: z.enum(["own", "all"]),
  records: z.array(z.record(z.string(), z.unknown())),
  size_limited: z.boolean(),
  scan_limited: z.boolean(),
};

/** What the tool returns (also its `structuredContent`). */
export interface AuditTailResult {
  readonly ok: boolean;
  readonly code: "OK" | "SCOPE_DENIED" | "AUDIT_UNAVAILABLE" | "INTERNAL_ERROR";
  readonly reason: string;
  readonly scope: "own" | "all";
  readonly records: readonly Readonly<Record<string, unknown>>[];
  readonly size_limited: boolean;
  readonly scan_limited: boolean;
}

function refusal(
  code: AuditTailResult["code"],
  reason: string,
  scope: "own" | "all",
): AuditTailResult {
  return { ok: false, code, reason, scope, records: [], size_limited: false, scan_limited: false };
}

/**
 * @param context the server context (its log)
 * @param caller who asks
 * @param args the SDK-validated arguments
 * @param requestId the JSON-RPC id of this call, to leave out the HTTP layer's record of it
 */
export async function auditTailTool(
  context: ServerContext,
  caller: CallerIdentity,
  args: { limit?: number | undefined },
  requestId: string | number,
): Promise<AuditTailResult> {
  const callId = crypto.randomUUID();
  try {
    return await readTail(context, caller, args, requestId, callId);
  } catch (error) {
    // The details go to the log, never to the client: a message can carry paths.
    const text = error instanceof Error ? `${error.name}: ${error.message}` : String(error);
    await context.audit.writeEvent("internal_error", {
      call_id: callId,
      where: "audit_tail",
      message: text.slice(0, 4096),
    }).catch(() => {});
    return refusal("INTERNAL_ERROR", INTERNAL_ERROR_REASON, "own");
  }
}

async function readTail(
  context: ServerContext,
  caller: CallerIdentity,
  args: { limit?: number | undefined },
  requestId: string | number,
  callId: string,
): Promise<AuditTailResult> {
  const limit = args.limit ?? DEFAULT_TAIL_RECORDS;
  const audit = context.audit;
  // Checked here as well as by the HTTP layer, should a route ever skip it.
  // `audit:full` needs an explicit grant: stdio's "every scope" (null) stops at own records.
  const full = caller.scopes !== null && caller.scopes.has("audit:full");
  const scope = full ? "all" : "own";
  if (!hasScope(caller, "audit:read")) {
    await audit.writeEvent("audit_read", {
      client_id: caller.clientId,
      call_id: callId,
      limit,
      scope,
      result_code: "SCOPE_DENIED",
    });
    return refusal(
      "SCOPE_DENIED",
      'This token lacks the "audit:read" scope that audit_tail needs.',
      scope,
    );
  }
  const written = await audit.writeEvent("audit_read", {
    client_id: caller.clientId,
    call_id: callId,
    limit,
    scope,
    result_code: "OK",
  });
  if (!written.ok && audit.failMode === "closed") {
    return refusal(
      "AUDIT_UNAVAILABLE",
      "The audit record of this call could not be written, so the log is not read.",
      scope,
    );
  }
  let askingCallSkipped = false;
  const request = String(requestId);
  const read = await readRecentRecords(audit.path, {
    limit,
    maxBytes: MAX_TAIL_BYTES,
    maxScanBytes: MAX_TAIL_SCAN_BYTES,
    beforeSeq: written.ok ? written.seq : null,
    include(record) {
      if (!full && !isOwn(record, caller, audit.writer)) return false;
      if (
        !askingCallSkipped && record.event === "tool_call" && record.tool === "audit_tail" &&
        record.request_id === request && record.client_id === caller.clientId
      ) {
        // Newest first: the first such record is the HTTP layer's record of this very call.
        askingCallSkipped = true;
        return false;
      }
      return true;
    },
  });
  if (!read.ok) {
    await audit.writeEvent("internal_error", {
      call_id: callId,
      where: "audit_tail",
      message: read.reason,
    });
    return refusal(
      "INTERNAL_ERROR",
      "The server could not read its audit log; the operator can find the details there.",
      scope,
    );
  }
  const { records, sizeLimited, scanLimited } = read.value;
  const notes = [
    sizeLimited
      ? ` Older records were left out: the answer is capped at ${MAX_TAIL_BYTES} bytes.`
      : "",
    scanLimited ? " Older records may exist beyond the part of the log this call reads." : "",
  ].join("");
  return {
    ok: true,
    code: "OK",
    reason: `${records.length} record(s) ${
      full ? "of every caller" : "of yours"
    }, oldest first.${notes}`,
    scope,
    records,
    size_limited: sizeLimited,
    scan_limited: scanLimited,
  };
}

/**
 * Whether `record` names `caller` the way the audit names callers. A record
 * without a `client_id` field (server start and stop, the log's own
 * records) belongs to no caller.
 */
function isOwn(
  record: Readonly<Record<string, unknown>>,
  caller: CallerIdentity,
  writer: string,
): boolean {
  if (!Object.hasOwn(record, "client_id") || record.client_id !== caller.clientId) return false;
  // Callers without an id are told apart only by the server process serving them.
  return caller.clientId !== null || record.writer === writer;
}
