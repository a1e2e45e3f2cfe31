/**
 * The audit event kinds of download links. Never the token (the log refuses
 * a `token` key anyway): the link id, path, digest and size say which file
 * left the jail, and for whom.
 *
 * @module
 */
import type { AuditLog } from "../audit/mod.ts";

declare module "../audit/mod.ts" {
  interface AuditEventFields {
    /** A link was made: a snapshot of `path` now sits in the state dir. */
    link_created: {
      readonly client_id: string | null;
      readonly link_id: string;
      readonly path: string;
      readonly sha256: string;
      readonly size: number;
      readonly expires_at: string;
      /** -1: unlimited within the lifetime. */
      readonly max_downloads: number;
      readonly inline: boolean;
    };
    /** `create_file_link` refused (the path as asked, redacted by the log). */
    link_refused: {
      readonly client_id: string | null;
      readonly path: string;
      /** The result code. */
      readonly result: string;
      readonly reason: string;
    };
    /** One download was served (counted before the first byte). */
    link_downloaded: {
      readonly client_id: string | null;
      readonly link_id: string;
      readonly path: string;
      readonly sha256: string;
      readonly size: number;
      /** This download's number, 1 for the first. */
      readonly downloads: number;
      readonly remote_addr: string;
    };
    /** A download request that served nothing (the client got a bare 404). */
    link_download_refused: {
      /** `malformed`, `unknown` (guessed, revoked, used up), `expired`, `missing_snapshot`, `tampered`. */
      readonly reason: string;
      readonly link_id: string | null;
      readonly remote_addr: string;
    };
    /** The owner revoked a link. */
    link_revoked: {
      readonly client_id: string | null;
      readonly link_id: string;
      readonly path: string;
      readonly sha256: string;
      readonly size: number;
    };
    /** A link's lifetime ended; its snapshot was deleted. */
    link_expired: {
      readonly client_id: string | null;
      readonly link_id: string;
      readonly path: string;
    };
  }
}

/** Where link events go. */
export type LinkAudit = Pick<AuditLog, "writeEvent">;

/** The OAuth client id of an owner key (`local` has none). */
export function ownerClientId(owner: string): string | null {
  return owner.startsWith("client:") ? owner.slice("client:".length) : null;
}
