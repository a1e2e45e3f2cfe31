/**
 * Persistent OAuth state in `state_dir` (or, for a fleet, in the shared
 * PostgreSQL state store): the JWT secret, approved clients and the
 * revocation list.
 *
 * @module
 */
import { ensureStateDir } from "../../state/state_dir.ts";
import { loadOrCreateSecret } from "./secret.ts";
import { ClientRegistry } from "./registry.ts";
import { loadOrCreateSharedSecret } from "./shared_secret.ts";
import type { StateStore } from "../../state/mod.ts";

export { ensureStateDir, type StateDirResult } from "../../state/state_dir.ts";
export { loadOrCreateSecret, MIN_SECRET_BYTES, SECRET_FILE, type SecretResult } from "./secret.ts";
export { type ApprovedClients, ClientRegistry, type RevokeClientResult } from "./registry.ts";
export { type ClientRecord, CLIENTS_FILE } from "./clients.ts";
export { REVOCATIONS_FILE, type RevocationView } from "./revocations.ts";
export { REVOCATION_MAX_AGE_MS } from "./sources.ts";

/** The opened state of one server. */
export interface AuthState {
  /** HS256 key bytes. */
  readonly key: Uint8Array;
  /** True when this start generated the secret. */
  readonly secretCreated: boolean;
  /** Approved clients and revocations, read fresh on every check. */
  readonly registry: ClientRegistry;
}

/**
 * Opens the OAuth state: in a state directory (created if needed, the secret
 * loaded or created there), or in the shared state store of a fleet.
 *
 * @param source The state directory, or the shared store (PostgreSQL backend).
 * @param onClientRevoked See {@linkcode ClientRegistry}.
 * @returns The state, or a sentence explaining why the server must not start.
 *
 * @example
 * ```ts
 * import { openAuthState } from "./mod.ts";
 * const opened = await openAuthState(await Deno.makeTempDir());
 * if (!opened.ok) throw new Error(opened.message);
 * opened.state.secretCreated; // true: a fresh directory gets a new secret
 * ```
 */
export async function openAuthState(
  source: string | StateStore,
  onClientRevoked: ((clientId: string) => Promise<unknown>) | null = null,
): Promise<{ ok: true; state: AuthState } | { ok: false; message: string }> {
  if (typeof source === "string") {
    const dir = await ensureStateDir(source);
    if (!dir.ok) return dir;
  }
  const secret = typeof source === "string"
    ? await loadOrCreateSecret(source)
    : await loadOrCreateSharedSecret(source);
  if (!secret.ok) return secret;
  const registry = new ClientRegistry(source, onClientRevoked);
  const where = typeof source === "string" ? `in "${source}"` : "in the state store";
  try {
    await registry.revocations();
  } catch (error) {
    return { ok: false, message: `Cannot read the OAuth revocation list ${where}: ${error}.` };
  }
  return { ok: true, state: { key: secret.key, secretCreated: secret.created, registry } };
}
