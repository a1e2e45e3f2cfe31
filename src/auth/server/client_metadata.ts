/**
 * Client ID Metadata Documents (the MCP 2025-11-25 authorization spec's
 * preferred registration): the `client_id` is an https URL, and the client's
 * metadata is the JSON document served there. We fetch it only for URLs the
 * operator allowlisted (`[auth] client_id_metadata_allow`), within a time
 * and byte bound and without redirects, and accept it only when the
 * document's own `client_id` is that URL exactly (else anyone's document
 * could claim to be another client). Its metadata passes the same checks as
 * a dynamic registration; its `redirect_uris` are then enforced by exact
 * match like any client's. Like a registration, a fetched document grants
 * nothing: the client waits for the operator's approval with the PIN.
 *
 * @module
 */
import { isLoopbackHost } from "../settings.ts";
import { type FetchBounds, fetchJsonObject, ProviderFetchError } from "../bearer/provider_fetch.ts";
import { checkRegistration, type RegisteredClient } from "./registration.ts";

/** How long a document fetch may take. */
export const CLIENT_METADATA_TIMEOUT_MS = 5000;

/** The result of resolving a URL `client_id`. */
export type ClientMetadataResult =
  | { readonly ok: true; readonly client: RegisteredClient }
  | { readonly ok: false; readonly reason: string };

/** True when `clientId` has the shape of a metadata document URL (so DCR ids never match). */
export function looksLikeClientIdUrl(clientId: string): boolean {
  return clientId.startsWith("https://") || clientId.startsWith("http://");
}

/**
 * Whether the operator allowlisted this client-id URL: an entry is either
 * the exact URL, or a host name whose documents are all allowed.
 */
export function isAllowedClientIdUrl(url: URL, allow: readonly string[]): boolean {
  return allow.some((entry) =>
    entry.includes("/") ? entry === url.href : entry === url.hostname.toLowerCase()
  );
}

/**
 * Fetches and checks the document at `clientId`.
 *
 * @param issuer Our issuer: plain http documents are accepted only when it is loopback too.
 */
export async function resolveClientMetadata(
  clientId: string,
  options: {
    readonly allow: readonly string[];
    readonly issuer: string;
    readonly maxBytes: number;
    readonly timeoutMs?: number;
    readonly now: () => number;
  },
): Promise<ClientMetadataResult> {
  let url: URL;
  try {
    url = new URL(clientId);
  } catch {
    return { ok: false, reason: "not_a_url" };
  }
  // The spec requires https with a path; plain http only between loopback
  // parties (tests, a local client), where no network path exists to tamper.
  const loopbackPair = url.protocol === "http:" && isLoopbackHost(url.hostname) &&
    isLoopbackHost(new URL(options.issuer).hostname);
  if (url.protocol !== "https:" && !loopbackPair) return { ok: false, reason: "not_https" };
  if (
    url.href !== clientId || url.pathname === "/" || url.hash !== "" || url.username !== "" ||
    url.password !== ""
  ) {
    return { ok: false, reason: "not_canonical" };
  }
  if (!isAllowedClientIdUrl(url, options.allow)) return { ok: false, reason: "not_allowlisted" };
  const bounds: FetchBounds = {
    timeoutMs: options.timeoutMs ?? CLIENT_METADATA_TIMEOUT_MS,
    maxBytes: options.maxBytes,
  };
  let doc: Record<string, unknown>;
  try {
    doc = await fetchJsonObject(clientId, { headers: { accept: "application/json" } }, bounds);
  } catch (error) {
    // `timeout`, `too_large`, `status` (a redirect too), `not_json`, `network`.
    return { ok: false, reason: error instanceof ProviderFetchError ? error.kind : "network" };
  }
  if (doc.client_id !== clientId) return { ok: false, reason: "client_id_mismatch" };
  // Only public clients: a document cannot hold a secret, and we issue to none.
  const method = doc.token_endpoint_auth_method;
  if (method !== undefined && method !== "none") return { ok: false, reason: "not_public" };
  const { client_id: _ignored, ...metadata } = doc;
  const checked = checkRegistration(metadata);
  if (!checked.ok) return { ok: false, reason: checked.error };
  return {
    ok: true,
    client: {
      client_id: clientId,
      ...checked.metadata,
      client_id_issued_at: Math.floor(options.now() / 1000),
    },
  };
}
