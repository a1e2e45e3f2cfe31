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

/** Shared state of the issuing side. */
export interface ServerDeps {
  readonly settings: AuthSettingsResolved;
  readonly key: Uint8Array;
  readonly registry: ClientRegistry;
  readonly audit: AuditSink;
  /** Clock in milliseconds. */
  readonly now: () => number;
  /** Registered, not yet approved clients (memory only). */
  readonly pending: ExpiringMap<string, RegisteredClient>;
  readonly transactions: ExpiringMap<string, AuthorizeTransaction>;
  readonly codes: CodeStore;
  readonly pinLimiter: FailureLimiter;
  /** Prints one line for the operator (stderr); never a secret. */
  readonly operatorLog: (line: string) => void;
}

/** Request facts the transport knows and we cannot derive from the `Request`. */
export interface RequestInfo {
  readonly remoteAddr: string;
}

/** Registered clients wait this long for their first approval. */
export const PENDING_CLIENT_TTL_MS = 30 * 60_000;
/** Most registrations waiting for approval at once; further ones are refused. */
export const MAX_PENDING_CLIENTS = 100;

/** A client known to us: approved (persisted) or still pending. */
export interface KnownClient {
  readonly client: RegisteredClient;
  readonly approved: boolean;
}

/**
 * Looks a client up. A revoked id is unknown, even if a pending copy of it
 * lingers in memory.
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
