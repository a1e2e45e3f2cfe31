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
  return pending === undefined ? null : { client: pending, approved: false };
}
