/**
 * The Ed25519 key that signs audit checkpoints, kept in the state directory
 * (`audit-key/ed25519-private.json`, the public half beside it as
 * `audit-key/ed25519-public.json`), created on first use.
 *
 * Threat answered: a checkpoint anyone could write proves nothing. The
 * private key lives where only the server's user can read it (the record
 * store makes the folder 0700 and each file 0600, and the state directory is
 * refused when others can write it); the public key is what the operator
 * copies elsewhere and gives `htmcp audit verify --key`.
 *
 * Creation happens under the record store's lock, so two servers starting
 * together on one state directory make one key, not two that overwrite each
 * other. A key file that exists but cannot be read as a key is refused,
 * never replaced: replacing it would quietly orphan every checkpoint signed
 * before.
 *
 * @module
 */

import { decodeBase64Url } from "../encoding/mod.ts";
import { sha256Hex } from "./sha256.ts";
import { RecordStore } from "../state/mod.ts";

const KIND = "audit-key";
const PRIVATE_ID = "ed25519-private";
const PUBLIC_ID = "ed25519-public";
const ALGORITHM = { name: "Ed25519" } as const;

/** The public key as a JWK (RFC 8037), with its fingerprint as `kid`. */
export interface PublicKeyJwk {
  /** RFC 8037 key type for Edwards-curve keys. */
  readonly kty: "OKP";
  /** The only curve the checkpoints are signed with. */
  readonly crv: "Ed25519";
  /** The raw 32-byte public key, base64url. */
  readonly x: string;
  /** The key's fingerprint (`keyFingerprint` of `x`), which each checkpoint names. */
  readonly kid: string;
}

/** The signing key, ready to use. */
export interface CheckpointKey {
  /** Signs checkpoints; never leaves the state directory. */
  readonly privateKey: CryptoKey;
  /** The half an operator copies off the machine to verify with (`htmcp audit key`). */
  readonly publicJwk: PublicKeyJwk;
  /** First 16 hex digits of the SHA-256 of the raw public key. */
  readonly fingerprint: string;
}

/** A key, or the sentence saying why there is none. */
export type KeyResult =
  | { readonly ok: true; readonly key: CheckpointKey; readonly created: boolean }
  | { readonly ok: false; readonly message: string };

/** A public key read for verification. */
export interface VerifyKey {
  /** Checks checkpoint signatures. */
  readonly publicKey: CryptoKey;
  /** Recomputed from the key bytes (a `kid` in the file is not trusted). */
  readonly fingerprint: string;
}

/** A public key read from its file, or the sentence why the text is not one. */
export type ReadVerifyKeyResult =
  | { readonly ok: true; readonly key: VerifyKey }
  | { readonly ok: false; readonly problem: string };

/** Fingerprint of a raw 32-byte Ed25519 public key. */
export function keyFingerprint(raw: Uint8Array): string {
  return sha256Hex(raw).slice(0, 16);
}

function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

function isPrivateJwk(value: unknown): value is JsonWebKey & { x: string; d: string } {
  if (typeof value !== "object" || value === null) return false;
  const jwk = value as Record<string, unknown>;
  return jwk.kty === "OKP" && jwk.crv === "Ed25519" && typeof jwk.x === "string" &&
    typeof jwk.d === "string";
}

function publicJwkOf(x: string): PublicKeyJwk {
  const raw = decodeBase64Url(x);
  // x comes from a key the runtime exported or one checked as a private JWK.
  if (raw === null) throw new TypeError(`The Ed25519 public key "${x}" is not base64url.`);
  return { kty: "OKP", crv: "Ed25519", x, kid: keyFingerprint(raw) };
}

/**
 * Reads the signing key from `stateDir`, creating it (and its public half)
 * when there is none.
 *
 * @param stateDir the state directory (created 0700 when missing)
 * @returns the key, or why it cannot be used
 * @example
 * ```ts
 * import { loadOrCreateCheckpointKey } from "./checkpoint_key.ts";
 * const loaded = await loadOrCreateCheckpointKey("/var/lib/htmcp");
 * if (loaded.ok) console.log(JSON.stringify(loaded.key.publicJwk));
 * ```
 */
export async function loadOrCreateCheckpointKey(stateDir: string): Promise<KeyResult> {
  const store = new RecordStore(stateDir);
  const where = `${stateDir}/${KIND}/${PRIVATE_ID}.json`;
  try {
    return await store.withLock(KIND, async () => {
      let stored = await store.read(KIND, PRIVATE_ID);
      let created = false;
      if (stored === null) {
        if ((await store.list(KIND)).includes(PRIVATE_ID)) {
          return {
            ok: false,
            message:
              `The audit signing key "${where}" cannot be read as a key; move it aside only if no checkpoint signed by it matters.`,
          } as const;
        }
        const pair = await crypto.subtle.generateKey(ALGORITHM, true, [
          "sign",
          "verify",
        ]) as CryptoKeyPair;
        const jwk = await crypto.subtle.exportKey("jwk", pair.privateKey);
        stored = { kty: jwk.kty, crv: jwk.crv, x: jwk.x, d: jwk.d };
        await store.write(KIND, PRIVATE_ID, stored);
        created = true;
      }
      if (!isPrivateJwk(stored)) {
        return {
          ok: false,
          message: `The audit signing key "${where}" is not an Ed25519 private key.`,
        } as const;
      }
      const publicJwk = publicJwkOf(stored.x);
      // The public half is rewritten from the private one whenever it is
      // missing or differs, so what the operator copies always matches.
      const onDisk = await store.read(KIND, PUBLIC_ID);
      if (JSON.stringify(onDisk) !== JSON.stringify(publicJwk)) {
        await store.write(KIND, PUBLIC_ID, publicJwk);
      }
      const privateKey = await crypto.subtle.importKey(
        "jwk",
        { kty: "OKP", crv: "Ed25519", x: stored.x, d: stored.d },
        ALGORITHM,
        false,
        ["sign"],
      );
      return {
        ok: true,
        key: { privateKey, publicJwk, fingerprint: publicJwk.kid },
        created,
      } as const;
    });
  } catch (error) {
    return {
      ok: false,
      message: `Cannot read or create the audit signing key "${where}": ${messageOf(error)}.`,
    };
  }
}

/**
 * Reads a public key file as `htmcp audit key` prints it (a JWK with
 * `kty` OKP, `crv` Ed25519 and `x`; `kid` is recomputed, never trusted).
 *
 * @param text the file's text
 * @returns the key, or why the text is not one
 */
export async function readVerifyKey(
  text: string,
): Promise<ReadVerifyKeyResult> {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return { ok: false, problem: "it is not JSON" };
  }
  const jwk = value as Record<string, unknown> | null;
  if (
    typeof jwk !== "object" || jwk === null || jwk.kty !== "OKP" || jwk.crv !== "Ed25519" ||
    typeof jwk.x !== "string"
  ) {
    return { ok: false, problem: "it is not an Ed25519 public key (JWK with kty OKP)" };
  }
  const raw = decodeBase64Url(jwk.x);
  if (raw === null || raw.length !== 32) return { ok: false, problem: "its x is not 32 bytes" };
  try {
    const publicKey = await crypto.subtle.importKey(
      "jwk",
      { kty: "OKP", crv: "Ed25519", x: jwk.x },
      ALGORITHM,
      false,
      ["verify"],
    );
    return { ok: true, key: { publicKey, fingerprint: keyFingerprint(raw) } };
  } catch (error) {
    return { ok: false, problem: messageOf(error) };
  }
}
