/**
 * Unpadded base64url (RFC 4648 §5), the alphabet of PKCE, JWTs, signatures
 * in the audit log and our identifiers, through the runtime's own
 * `Uint8Array` base64 methods (no `node:buffer`, which would load Deno's
 * Node compatibility layer at startup).
 *
 * @module
 */

const BASE64URL = /^[A-Za-z0-9_-]*$/;

/**
 * Encodes bytes as unpadded base64url.
 *
 * @param bytes Any bytes.
 * @returns The text, without `=` padding.
 * @example
 * ```ts
 * import { encodeBase64Url } from "./mod.ts";
 * encodeBase64Url(new Uint8Array([251, 255])); // "-_8"
 * ```
 */
export function encodeBase64Url(bytes: Uint8Array): string {
  return bytes.toBase64({ alphabet: "base64url", omitPadding: true });
}

/**
 * Decodes unpadded base64url.
 *
 * @param text The text; padding, whitespace or any other character is refused.
 * @returns The bytes, or null when `text` is not unpadded base64url.
 * @example
 * ```ts
 * import { decodeBase64Url } from "./mod.ts";
 * decodeBase64Url("-_8"); // Uint8Array [251, 255]
 * decodeBase64Url("-_8="); // null
 * ```
 */
export function decodeBase64Url(text: string): Uint8Array<ArrayBuffer> | null {
  // The runtime's decoder skips ASCII whitespace and accepts padding; the
  // forms we write have neither, so anything else is not ours.
  if (!BASE64URL.test(text) || text.length % 4 === 1) return null;
  try {
    return Uint8Array.fromBase64(text, { alphabet: "base64url" });
  } catch {
    return null;
  }
}
