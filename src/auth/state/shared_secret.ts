/**
 * The HS256 signing secret of a fleet, in the shared state store (record
 * `oauth_keys/jwt_hs256`), so a token issued by one replica verifies on
 * every other. Created once: each starting replica offers a fresh random key
 * with create-if-absent, exactly one offer wins, and every replica (the
 * losers too) then uses the stored one.
 *
 * Whoever can write that record can mint tokens: the database is trusted
 * state, like the state directory (SECURITY.md).
 *
 * @module
 */
import type { StateStore } from "../../state/mod.ts";
import { MIN_SECRET_BYTES, type SecretResult } from "./secret.ts";

const KIND = "oauth_keys";
const ID = "jwt_hs256";

function toBase64(bytes: Uint8Array): string {
  return btoa(String.fromCharCode(...bytes));
}

function fromBase64(text: string): Uint8Array | null {
  try {
    return Uint8Array.from(atob(text), (c) => c.charCodeAt(0));
  } catch {
    return null;
  }
}

/**
 * Reads the fleet's secret, creating it when absent.
 *
 * @returns The key bytes, or a sentence explaining why they cannot be used.
 */
export async function loadOrCreateSharedSecret(store: StateStore): Promise<SecretResult> {
  try {
    let created = false;
    let stored = await store.read(KIND, ID);
    if (stored === null) {
      const key = crypto.getRandomValues(new Uint8Array(MIN_SECRET_BYTES));
      created = await store.compareAndSwap(KIND, ID, null, { key: toBase64(key) });
      stored = await store.read(KIND, ID);
    }
    const text = (stored as { key?: unknown } | null)?.key;
    const key = typeof text === "string" ? fromBase64(text) : null;
    if (key === null || key.byteLength < MIN_SECRET_BYTES) {
      return {
        ok: false,
        message:
          `The OAuth secret in the state store (${KIND}/${ID}) is not a key of at least ${MIN_SECRET_BYTES} bytes; delete that record to have a new one generated.`,
      };
    }
    return { ok: true, key, created };
  } catch (error) {
    const reason = error instanceof Error ? error.message : String(error);
    return { ok: false, message: `Cannot read the OAuth secret in the state store: ${reason}.` };
  }
}
