/**
 * The audit interface the authorization server writes to: the `writeEvent`
 * of the real `AuditLog` (`src/audit/`), and the event kinds this module adds
 * to its schema. Never a token, code, PIN or secret: the log refuses such keys.
 *
 * @module
 */
import type { AuditLog } from "../audit/mod.ts";

declare module "../audit/mod.ts" {
  interface AuditEventFields {
    /** The first approval of a client: it is now persisted in `state_dir`. */
    client_persisted: {
      readonly client_id: string;
      readonly client_name: string;
      readonly redirect_uris: readonly string[];
    };
    /** An approval form post refused before its PIN was checked (never the token or PIN). */
    approval_refused: {
      /** `foreign_origin`, `bad_form`, `expired` or `bad_form_token`. */
      readonly reason: string;
      readonly client_id: string | null;
      readonly remote_addr: string | null;
      /** The `Origin` header as sent (`null` is the text "null"), or null when absent. */
      readonly origin: string | null;
    };
    /** The operator pressed "Deny" on the approval page. */
    authorization_denied: { readonly client_id: string; readonly remote_addr: string | null };
    /** An approval was refused because too many wrong PINs were entered. */
    pin_rate_limited: {
      readonly client_id: string | null;
      readonly remote_addr: string | null;
      /** `address` (this address's budget) or `global` (everyone's). */
      readonly limit: string;
      readonly retry_after_s: number;
    };
    /** An authorization code was presented a second time; its tokens are revoked. */
    code_reused: {
      readonly client_id: string;
      readonly revoked_jtis: readonly string[];
      /**
       * False when the revocation could not be appended to `state_dir` (it
       * still holds in this process, not in other servers sharing the dir).
       */
      readonly revocation_stored: boolean;
      /** Why the append failed; only when `revocation_stored` is false. */
      readonly revocation_error?: string;
    };
    /** The HS256 secret was generated (first start). */
    oauth_secret_created: { readonly state_dir: string };
  }
}

/** Where the authorization server writes audit events: an `AuditLog`, or anything shaped like it. */
export type AuditSink = Pick<AuditLog, "writeEvent">;

/** The parameters of `AuditSink.writeEvent`. */
type EventArgs = Parameters<AuditSink["writeEvent"]>;

/**
 * Writes an event and reports whether the caller may go on. An event that
 * precedes issuing a credential must be on disk first when the operator chose
 * `audit_fail_mode = "closed"`: a result `{ ok: false }` then stops the
 * issuance. With `open` the failure is tolerated.
 */
export async function writeAudit<K extends EventArgs[0]>(
  sink: AuditSink,
  failClosed: boolean,
  event: K,
  fields: Parameters<typeof sink.writeEvent<K>>[1],
): Promise<boolean> {
  const result = await sink.writeEvent(event, fields);
  return result.ok || !failClosed;
}
