/**
 * The audit event kinds the HTTP transport adds to the log's schema. Never a
 * body, a token or a session id: only what an operator needs to see that a
 * request was refused and why.
 *
 * @module
 */
import type { AuditLog } from "../../audit/mod.ts";

declare module "../../audit/mod.ts" {
  interface AuditEventFields {
    /** A request whose `Host` or `Origin` names another site (DNS rebinding). */
    http_forbidden: {
      readonly method: string;
      /** URL path only, never the query string. */
      readonly path: string;
      readonly header: string;
      readonly reason: string;
      readonly remote_addr: string | null;
    };
    /** More refusals of one source and reason in one interval than the first (which has its own record). */
    refusals_aggregated: {
      readonly source: string;
      readonly reason: string;
      /** The event kind of the refusals counted (`bearer_invalid`, `http_forbidden`). */
      readonly refused_event: string;
      /** Refusals after the first one. */
      readonly count: number;
      readonly since: string;
      readonly until: string;
    };
    /** Refusals not written at all: the interval's budget of sources and reasons was spent. */
    refusals_suppressed: {
      readonly count: number;
      readonly since: string;
      readonly until: string;
    };
    /** Accepting connections failed (EMFILE, ENFILE): at most one record per interval. */
    http_accept_failed: {
      readonly message: string;
      /** Failures since the previous record. */
      readonly count: number;
      readonly total: number;
    };
    /**
     * A tool call refused because the token lacks the tool's scope (`tool`),
     * or a tasks or resources request for the same reason (`method`).
     */
    scope_denied:
      | { readonly client_id: string; readonly tool: string; readonly scope: string }
      | { readonly client_id: string; readonly method: string; readonly scope: string };
    /** A new session refused because a session cap is reached. */
    session_limit: {
      readonly client_id: string | null;
      readonly remote_addr: string;
      readonly limit: string;
      readonly max: number;
    };
    /** A session id presented by a client other than the one that created it. */
    session_refused: {
      readonly client_id: string | null;
      readonly remote_addr: string | null;
    };
  }
}

/** Where the transport writes audit events. */
export type TransportAudit = Pick<AuditLog, "writeEvent">;
