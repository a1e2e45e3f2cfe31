/**
 * `GET /download/{token}`: serves a link's snapshot. No bearer token: the
 * URL's token is the capability (the transport's Host/Origin checks still
 * run first).
 *
 * Deny on failure: every request that does not end in a verified download
 * gets the same bare 404 (no body; see `notFound`), whether its token was
 * malformed, guessed, revoked, used up or expired, and whether the snapshot
 * failed its hash check.
 *
 * Order, fixed: shape check (no lookup for junk), claim under the store's
 * lock (lifetime, count, open), hash the open snapshot against its record,
 * audit the download (fail closed: 503 before any byte when the operator
 * asked for a closed log), then stream the same descriptor.
 *
 * @module
 */
import { newFileHash } from "./file_hash.ts";
import type { AuditFailMode } from "../config/types.ts";
import type { LinkAudit } from "./audit_events.ts";
import { ownerClientId } from "./audit_events.ts";
import { downloadHeaders, notFound } from "./headers.ts";
import type { LinkStore } from "./store.ts";

/** The path prefix of download URLs. */
export const DOWNLOAD_PREFIX = "/download/";

/** What the route needs. */
export interface DownloadRouteDeps {
  readonly store: LinkStore;
  readonly audit: LinkAudit;
  readonly failMode: AuditFailMode;
}

/** True when `path` is a download URL (the handler's one-line dispatch test). */
export function isDownloadPath(path: string): boolean {
  return path.startsWith(DOWNLOAD_PREFIX);
}

/**
 * `path` as every record and log line may show it: a download path's last
 * segment is the token itself, the whole capability, so it is masked.
 *
 * @example
 * ```ts
 * import { maskedPath } from "./route.ts";
 * maskedPath("/download/Zm9vYmFyYmF6"); // "/download/{token}"
 * maskedPath("/mcp"); // "/mcp"
 * ```
 */
export function maskedPath(path: string): string {
  return isDownloadPath(path) ? `${DOWNLOAD_PREFIX}{token}` : path;
}

/** Reads the whole descriptor once and compares its SHA-256 and length with the record. */
async function matchesRecord(file: Deno.FsFile, sha256: string, size: number): Promise<boolean> {
  const hash = await newFileHash();
  const buffer = new Uint8Array(64 * 1024);
  let total = 0;
  while (true) {
    const read = await file.read(buffer);
    if (read === null) break;
    total += read;
    if (total > size) return false;
    hash.update(buffer.subarray(0, read));
  }
  return total === size && hash.digestHex() === sha256;
}

/**
 * Serves one download request.
 *
 * @param deps The store and the audit log.
 * @param request The request (its path starts with `/download/`).
 * @param remoteAddr The peer's address, for the audit.
 */
export async function handleDownload(
  deps: DownloadRouteDeps,
  request: Request,
  remoteAddr: string,
): Promise<Response> {
  if (request.method !== "GET") {
    // No lookup at all: a method error says nothing about the token.
    return new Response(null, { status: 405, headers: { allow: "GET" } });
  }
  const token = new URL(request.url).pathname.slice(DOWNLOAD_PREFIX.length);
  const refused = async (reason: string, linkId: string | null) => {
    await deps.audit.writeEvent("link_download_refused", {
      reason,
      link_id: linkId,
      remote_addr: remoteAddr,
    });
    return notFound();
  };
  const claim = await deps.store.claim(token);
  if (!claim.ok) {
    if (claim.why === "expired" && claim.record !== null) {
      await deps.audit.writeEvent("link_expired", {
        client_id: ownerClientId(claim.record.owner),
        link_id: claim.record.link_id,
        path: claim.record.path,
      });
    }
    return await refused(claim.why, claim.record?.link_id ?? null);
  }
  const { record, file } = claim.claimed;
  let handedOver = false;
  try {
    if (!(await matchesRecord(file, record.sha256, record.size))) {
      await deps.store.discard(token);
      return await refused("tampered", record.link_id);
    }
    const written = await deps.audit.writeEvent("link_downloaded", {
      client_id: ownerClientId(record.owner),
      link_id: record.link_id,
      path: record.path,
      sha256: record.sha256,
      size: record.size,
      downloads: record.downloads,
      remote_addr: remoteAddr,
    });
    if (!written.ok && deps.failMode === "closed") {
      // Nothing leaves unrecorded when the operator chose a closed log.
      return new Response(null, { status: 503, headers: { "cache-control": "no-store" } });
    }
    await file.seek(0, Deno.SeekMode.Start);
    handedOver = true;
    // The stream closes the descriptor when it ends or the client goes away.
    return new Response(file.readable, { status: 200, headers: downloadHeaders(record) });
  } finally {
    if (!handedOver) file.close();
  }
}
