/**
 * Persistent OAuth state in `state_dir`: the JWT secret, approved clients and
 * the revocation list.
 *
 * @module
 */
import { ensureStateDir } from "../../state/state_dir.ts";
import { loadOrCreateSecret } from "./secret.ts";
import { ClientRegistry } from "./registry.ts";

export { ensureStateDir, type StateDirResult } from "../../state/state_dir.ts";
export { loadOrCreateSecret, MIN_SECRET_BYTES, SECRET_FILE, type SecretResult } from "./secret.ts";
export { type ApprovedClients, ClientRegistry, type RevokeClientResult } from "./registry.ts";
export { type ClientRecord, CLIENTS_FILE } from "./clients.ts";
export { REVOCATIONS_FILE, type RevocationView } from "./revocations.ts";

/** The opened state of one server. */
export interface AuthState {
  /** HS256 key bytes. */
  readonly key: Uint8Array;
  /** True when this start generated the secret. */
  readonly secretCreated: boolean;
  readonly registry: ClientRegistry;
}

/**
 * Creates the state directory if needed and loads (or creates) the secret.
 *
 * @param stateDir The state directory.
 * @param onClientRevoked See {@linkcode ClientRegistry}.
 * @returns The state, or a sentence explaining why the server must not start.
 */
export async function openAuthState(
  stateDir: string,
  onClientRevoked: ((clientId: string) => Promise<unknown>) | null = null,
): Promise<{ ok: true; state: AuthState } | { ok: false; message: string }> {
  const dir = await ensureStateDir(stateDir);
  if (!dir.ok) return dir;
  const secret = await loadOrCreateSecret(stateDir);
  if (!secret.ok) return secret;
  const registry = new ClientRegistry(stateDir, onClientRevoked);
  try {
    await registry.revocations();
  } catch (error) {
    return {
      ok: false,
      message: `Cannot read the OAuth revocation list in "${stateDir}": ${error}.`,
    };
  }
  return { ok: true, state: { key: secret.key, secretCreated: secret.created, registry } };
}
