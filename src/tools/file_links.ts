/**
 * `create_file_link`, `list_file_links` and `revoke_file_link`: hand the
 * user one file from the jail as a short-lived download URL.
 *
 * Scope: `shell:read`. A link copies bytes out of the jail, which is a read
 * (the same a `cat` of the file would show the model), and it never runs a
 * program; the audit records who made which link of which file.
 *
 * Each caller sees and revokes only its own links; another caller's link id
 * is "not found", exactly like an unknown one.
 *
 * @module
 */
import * as z from "zod";
import type { ResultCode } from "../result/codes.ts";
import type { ServerContext } from "../context/mod.ts";
import { type CallerIdentity, hasScope } from "./caller.ts";
import { sessionOwner } from "../session/mod.ts";
import { type LinkRecord, type LinkStore, ownerClientId } from "../links/mod.ts";
import { INTERNAL_ERROR_REASON } from "./internal_error.ts";

export const CREATE_FILE_LINK_DESCRIPTION =
  "Make a download link for one regular file in the jail, for the user to open in a browser. " +
  "The link serves a snapshot taken now (later changes to the file do not show), ends after " +
  "ttl_s seconds, after max_downloads downloads, or when revoked. Symlinks are never followed. " +
  "Returns link_id, url, expires_at, sha256 and size.";
export const LIST_FILE_LINKS_DESCRIPTION = "List this caller's live download links (never URLs).";
export const REVOKE_FILE_LINK_DESCRIPTION =
  "Revoke one of this caller's download links by its link_id; the URL stops working at once.";

/** The longest `max_downloads` a caller may ask for. */
export const MAX_DOWNLOADS_BOUND = 1_000_000;

/** The input shape of `create_file_link`, bounded by the policy's `[links]`. */
export function createFileLinkInput(maxTtlS: number) {
  return {
    path: z.string().min(1).max(4096).describe(
      "The file, relative to the jail root (or absolute under it); no symlinks, no '..'.",
    ),
    ttl_s: z.number().int().min(1).max(maxTtlS).optional().describe(
      `Seconds the link lives (at most ${maxTtlS}; default from the policy).`,
    ),
    max_downloads: z.number().int().min(1).max(MAX_DOWNLOADS_BOUND).optional().describe(
      "Downloads after which the link stops working (default: unlimited within its lifetime).",
    ),
    inline: z.boolean().optional().describe(
      "Let a browser show the file instead of saving it (text as text/plain, else bytes).",
    ),
  };
}

export const LINK_RESULT_SHAPE = {
  ok: z.boolean(),
  code: z.string(),
  reason: z.string(),
  link_id: z.string().nullable(),
  url: z.string().nullable(),
  expires_at: z.string().nullable(),
  sha256: z.string().nullable(),
  size: z.number().nullable(),
};

export type LinkResult = {
  ok: boolean;
  code: ResultCode;
  reason: string;
  link_id: string | null;
  url: string | null;
  expires_at: string | null;
  sha256: string | null;
  size: number | null;
};

/** One link as `list_file_links` shows it. */
export type LinkSummary = {
  link_id: string;
  path: string;
  sha256: string;
  size: number;
  expires_at: string;
  downloads: number;
  max_downloads: number | null;
  inline: boolean;
};

export const LINK_LIST_SHAPE = {
  ok: z.boolean(),
  code: z.string(),
  reason: z.string(),
  links: z.array(z.object({
    link_id: z.string(),
    path: z.string(),
    sha256: z.string(),
    size: z.number(),
    expires_at: z.string(),
    downloads: z.number(),
    max_downloads: z.number().nullable(),
    inline: z.boolean(),
  })),
};

export type LinkList = { ok: boolean; code: ResultCode; reason: string; links: LinkSummary[] };

/** What the link tools need besides the context. */
export interface LinkToolDeps {
  readonly store: LinkStore;
  /** The externally visible origin the URL starts with (no trailing slash). */
  readonly baseUrl: string;
}

const EMPTY = { link_id: null, url: null, expires_at: null, sha256: null, size: null };

function refusal(code: ResultCode, reason: string): LinkResult {
  return { ok: false, code, reason, ...EMPTY };
}

const SCOPE_REASON = 'This token lacks the "shell:read" scope that download links need.';

function field(raw: unknown, name: string): unknown {
  return raw !== null && typeof raw === "object" ? (raw as Record<string, unknown>)[name] : null;
}

async function failed(context: ServerContext, tool: string, error: unknown): Promise<string> {
  const text = error instanceof Error ? `${error.name}: ${error.message}` : String(error);
  await context.audit.writeEvent("internal_error", {
    call_id: null,
    where: tool,
    message: text.slice(0, 4096),
  }).catch(() => console.error(`htmcp: internal error in ${tool}`));
  return INTERNAL_ERROR_REASON;
}

/**
 * Makes a link for `caller`. The arguments are read once into a snapshot
 * (the SDK has checked their types and bounds), then judged.
 */
export async function createFileLinkTool(
  context: ServerContext,
  caller: CallerIdentity,
  deps: LinkToolDeps,
  rawInput: unknown,
): Promise<LinkResult> {
  const input = Object.freeze({
    path: String(field(rawInput, "path") ?? ""),
    ttlS: field(rawInput, "ttl_s"),
    maxDownloads: field(rawInput, "max_downloads"),
    inline: field(rawInput, "inline") === true,
  });
  if (!hasScope(caller, "shell:read")) return refusal("SCOPE_DENIED", SCOPE_REASON);
  const settings = deps.store.settings;
  const ttlMs = typeof input.ttlS === "number" ? input.ttlS * 1000 : settings.defaultTtlMs;
  if (!Number.isSafeInteger(ttlMs) || ttlMs < 1000 || ttlMs > settings.maxTtlMs) {
    // The SDK bounds ttl_s already; this holds should a caller bypass it.
    throw new RangeError(`ttl_s must be from 1 to ${settings.maxTtlMs / 1000}.`);
  }
  const maxDownloads = typeof input.maxDownloads === "number" ? input.maxDownloads : null;
  const clientId = caller.clientId;
  let created;
  try {
    created = await deps.store.create(sessionOwner(clientId), {
      path: input.path,
      ttlMs,
      maxDownloads,
      inline: input.inline,
    });
  } catch (error) {
    return refusal("INTERNAL_ERROR", await failed(context, "create_file_link", error));
  }
  if (!created.ok) {
    const written = await context.audit.writeEvent("link_refused", {
      client_id: clientId,
      path: input.path.slice(0, 4096),
      result: created.code,
      reason: created.reason,
    });
    if (!written.ok && context.policy.auditFailMode === "closed") {
      return refusal("AUDIT_UNAVAILABLE", "The audit log cannot be written; nothing was made.");
    }
    return refusal(created.code, created.reason);
  }
  const { record, token } = created;
  const expiresAt = new Date(record.expires_ms).toISOString();
  const written = await context.audit.writeEvent("link_created", {
    client_id: clientId,
    link_id: record.link_id,
    path: record.path,
    sha256: record.sha256,
    size: record.size,
    expires_at: expiresAt,
    max_downloads: record.max_downloads ?? -1,
    inline: record.inline,
  });
  if (!written.ok && context.policy.auditFailMode === "closed") {
    // An unrecorded link must not exist: undo it before anyone can use it.
    await deps.store.revoke(record.owner, record.link_id).catch(() => {});
    return refusal("AUDIT_UNAVAILABLE", "The audit log cannot be written; no link was made.");
  }
  return {
    ok: true,
    code: "OK",
    reason: `Link made for "${record.path}" (${record.size} bytes), valid until ${expiresAt}` +
      (maxDownloads === null ? "." : ` or ${maxDownloads} download(s).`),
    link_id: record.link_id,
    url: `${deps.baseUrl}/download/${token}`,
    expires_at: expiresAt,
    sha256: record.sha256,
    size: record.size,
  };
}

function summary(record: LinkRecord): LinkSummary {
  return {
    link_id: record.link_id,
    path: record.path,
    sha256: record.sha256,
    size: record.size,
    expires_at: new Date(record.expires_ms).toISOString(),
    downloads: record.downloads,
    max_downloads: record.max_downloads,
    inline: record.inline,
  };
}

/** The caller's own live links (the URLs are never shown again: only hashes are kept). */
export async function listFileLinksTool(
  context: ServerContext,
  caller: CallerIdentity,
  deps: LinkToolDeps,
): Promise<LinkList> {
  if (!hasScope(caller, "shell:read")) {
    return { ok: false, code: "SCOPE_DENIED", reason: SCOPE_REASON, links: [] };
  }
  try {
    const links = (await deps.store.list(sessionOwner(caller.clientId))).map(summary);
    return { ok: true, code: "OK", reason: `${links.length} live link(s).`, links };
  } catch (error) {
    return {
      ok: false,
      code: "INTERNAL_ERROR",
      reason: await failed(context, "list_file_links", error),
      links: [],
    };
  }
}

/** Revokes one of the caller's links; another caller's id is "not found". */
export async function revokeFileLinkTool(
  context: ServerContext,
  caller: CallerIdentity,
  deps: LinkToolDeps,
  rawInput: unknown,
): Promise<LinkResult> {
  const linkId = String(field(rawInput, "link_id") ?? "").slice(0, 64);
  if (!hasScope(caller, "shell:read")) return refusal("SCOPE_DENIED", SCOPE_REASON);
  const owner = sessionOwner(caller.clientId);
  let revoked;
  try {
    revoked = await deps.store.revoke(owner, linkId);
  } catch (error) {
    return refusal("INTERNAL_ERROR", await failed(context, "revoke_file_link", error));
  }
  if (revoked === null) {
    await context.audit.writeEvent("link_refused", {
      client_id: caller.clientId,
      path: "",
      result: "LINK_NOT_FOUND",
      reason: `revoke_file_link of an id this caller has no live link for`,
    });
    return refusal(
      "LINK_NOT_FOUND",
      `No live link "${linkId}" of this caller: it was revoked, expired, used up, or never made by this caller.`,
    );
  }
  await context.audit.writeEvent("link_revoked", {
    client_id: ownerClientId(revoked.owner),
    link_id: revoked.link_id,
    path: revoked.path,
    sha256: revoked.sha256,
    size: revoked.size,
  });
  return {
    ok: true,
    code: "OK",
    reason: `Link "${revoked.link_id}" for "${revoked.path}" revoked; its URL now answers 404.`,
    link_id: revoked.link_id,
    url: null,
    expires_at: new Date(revoked.expires_ms).toISOString(),
    sha256: revoked.sha256,
    size: revoked.size,
  };
}
