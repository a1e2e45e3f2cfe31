/**
 * What every endpoint handler of the authorization server shares.
 *
 * @module
 */
import type { ExpiringMap } from "../_expiring_map.ts";
import type { AuditSink } from "../audit_sink.ts";
import type { AuthSettingsResolved } from "../settings.ts";
import type { ClientRegistry } from "../state/mod.ts";
import type { CodeStore } from "./codes.ts";
import type { FailureLimiter } from "./rate_limit.ts";
import type { RegisteredClient } from "./registration.ts";
import type { AuthorizeTransaction } from "./transaction.ts";
import { looksLikeClientIdUrl, resolveClientMetadata } from "./client_metadata.ts";

/**
 * Shared state of the issuing side, built once per server by
 * `createAuthorizationServer` and handed to every endpoint through
 * {@linkcode createRouter}. Every table strangers can fill is bounded
 * ({@linkcode ExpiringMap}, {@linkcode CodeStore}), so no request pattern
 * grows memory without limit.
 */
export interface ServerDeps {
  /** The issuer, resource and limits resolved from the policy and the base URL. */
  readonly settings: AuthSettingsResolved;
  /** The HS256 signing key of the access tokens (at least 256 bits, from the state directory or store). */
  readonly key: Uint8Array;
  /** The approved clients and the revocations, persisted: what survives a restart. */
  readonly registry: ClientRegistry;
  /** Where the issuing side writes its audit events (registrations, approvals, refusals). */
  readonly audit: AuditSink;
  /** Clock in milliseconds. */
  readonly now: () => number;
  /** Registered, not yet approved clients (memory only), keyed by client id. */
  readonly pending: ExpiringMap<string, RegisteredClient>;
  /** The open approval pages, keyed by their one-time transaction id. */
  readonly transactions: ExpiringMap<string, AuthorizeTransaction>;
  /** The authorization codes issued and not yet forgotten. */
  readonly codes: CodeStore;
  /** Failed-PIN throttling of the approval page (possibly shared with the approvals page). */
  readonly pinLimiter: FailureLimiter;
  /** Prints one line for the operator (stderr); never a secret. */
  readonly operatorLog: (line: string) => void;
}

/** Request facts the transport knows and we cannot derive from the `Request`. */
export interface RequestInfo {
  /** The peer's address as the listener saw it (the proxy's, behind one): what failed PINs are counted by. */
  readonly remoteAddr: string;
}

/** Registered clients wait this long for their first approval. */
export const PENDING_CLIENT_TTL_MS = 30 * 60_000;
/** Most registrations waiting for approval at once; further ones are refused. */
export const MAX_PENDING_CLIENTS = 100;

/** A client known to us: approved (persisted) or still pending. */
export interface KnownClient {
  /** The client's registration (or its fetched metadata document). */
  readonly client: RegisteredClient;
  /** True once the operator approved it with the PIN (persisted); false while it waits in memory. */
  readonly approved: boolean;
}

/**
 * Looks a client up. A revoked id is unknown, even if a pending copy of it
 * lingers in memory. An unknown URL `client_id` is fetched as a client
 * metadata document when `[auth] client_id_metadata_allow` lets it, and then
 * waits for approval like a registration.
 *
 * @param deps The issuing side's shared state.
 * @param clientId The `client_id` the request names.
 * @returns The client and whether it is approved, or null when it is unknown, revoked or refused.
 */
export async function findClient(deps: ServerDeps, clientId: string): Promise<KnownClient | null> {
  if (await deps.registry.isClientRevoked(clientId)) return null;
  const approved = await deps.registry.findApproved(clientId);
  if (approved !== null) return { client: approved, approved: true };
  const pending = deps.pending.get(clientId);
  if (pending !== undefined) return { client: pending, approved: false };
  return await fetchClientMetadata(deps, clientId);
}

/**
 * A URL `client_id` unknown so far: its metadata document, fetched and
 * checked, becomes a pending client (awaiting approval like a registration).
 */
async function fetchClientMetadata(
  deps: ServerDeps,
  clientId: string,
): Promise<KnownClient | null> {
  const allow = deps.settings.clientIdMetadataAllow;
  if (allow.length === 0 || !looksLikeClientIdUrl(clientId)) return null;
  const resolved = await resolveClientMetadata(clientId, {
    allow,
    issuer: deps.settings.issuer,
    maxBytes: deps.settings.maxBodyBytes,
    now: deps.now,
  });
  if (!resolved.ok) {
    await deps.audit.writeEvent("client_metadata_refused", {
      client_id: clientId,
      reason: resolved.reason,
    });
    return null;
  }
  const client = resolved.client;
  if (!deps.pending.set(clientId, client, deps.now() + PENDING_CLIENT_TTL_MS)) return null;
  await deps.audit.writeEvent("client_registered", {
    client_id: clientId,
    client_name: client.client_name ?? "",
    redirect_uris: client.redirect_uris,
  });
  return { client, approved: false };
}
