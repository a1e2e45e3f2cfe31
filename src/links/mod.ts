/**
 * File download links: an immutable snapshot of one jail file, served at
 * `/download/{token}` over HTTP until its lifetime, its download count or a
 * revocation ends it. See docs/links.md.
 *
 * @module
 */
import "./audit_events.ts";

export { type LinkAudit, ownerClientId } from "./audit_events.ts";
export {
  type Claimed,
  type ClaimRefusal,
  type ClaimResult,
  type CreateResult,
  type LinkRecord,
  type LinkRequest,
  LinkStore,
} from "./store.ts";
export type { SnapshotRefusalCode } from "./snapshot.ts";
export { contentDisposition } from "./headers.ts";
export { DOWNLOAD_PREFIX, isDownloadPath, maskedPath } from "./route.ts";
export { type LinkService, type LinksPolicy, startLinks, SWEEP_INTERVAL_MS } from "./service.ts";
// The settings the surface names (the audit log is the audit module's).
export type { AuditFailMode } from "../audit/mod.ts";
export type { LinkSettings } from "../config/types.ts";
export { isTokenShaped, tokenDigest } from "./token.ts";
