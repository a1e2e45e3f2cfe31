/**
 * Unpadded base64url (RFC 4648 §5), the alphabet of PKCE, JWTs and our
 * identifiers.
 *
 * @module
 */

/** Encodes bytes as unpadded base64url. */
export function encodeBase64Url(bytes: Uint8Array): string {
  let binary = "";
  for (const byte of bytes) binary += String.fromCharCode(byte);
  return btoa(binary).replaceAll("+", "-").replaceAll("/", "_").replace(/=+$/, "");
}
