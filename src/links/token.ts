/**
 * Download tokens and link ids.
 *
 * A token is the whole capability: whoever holds the URL may download, with
 * no bearer token. So it carries 256 random bits (a guess succeeds with
 * probability 2^-256 per try), travels only in the URL handed to the caller,
 * and is stored only as its SHA-256: a reader of the state directory or of a
 * backup learns which links exist, never how to use one. The link id is a
 * separate, non-secret name for listing, revoking and the audit log.
 *
 * @module
 */

/** Random bytes per token: 32, as the threat (guessing) needs and no more. */
export const TOKEN_BYTES = 32;

/** What a token looks like: 32 bytes in unpadded base64url are exactly 43 characters. */
const TOKEN_SHAPE = /^[A-Za-z0-9_-]{43}$/;

/** A link id: `lnk_` and 24 hex digits (96 random bits: unique, not secret). */
const LINK_ID_SHAPE = /^lnk_[0-9a-f]{24}$/;

function base64url(bytes: Uint8Array): string {
  return btoa(String.fromCharCode(...bytes)).replaceAll("+", "-").replaceAll("/", "_")
    .replaceAll("=", "");
}

function hex(bytes: Uint8Array): string {
  return Array.from(bytes, (byte) => byte.toString(16).padStart(2, "0")).join("");
}

/** A fresh token: 32 bytes from the system's CSPRNG, base64url without padding. */
export function newToken(): string {
  return base64url(crypto.getRandomValues(new Uint8Array(TOKEN_BYTES)));
}

/** A fresh link id. */
export function newLinkId(): string {
  return `lnk_${hex(crypto.getRandomValues(new Uint8Array(12)))}`;
}

/** True when `text` has a token's shape (checked before any lookup, so junk never reaches disk). */
export function isTokenShaped(text: string): boolean {
  return TOKEN_SHAPE.test(text);
}

/** True when `text` has a link id's shape. */
export function isLinkIdShaped(text: string): boolean {
  return LINK_ID_SHAPE.test(text);
}

/**
 * The SHA-256 of a token, lower-case hex: the only form in which a token is
 * kept (it is also the record's file name, 64 characters of `[0-9a-f]`).
 */
export async function tokenDigest(token: string): Promise<string> {
  const digest = await crypto.subtle.digest("SHA-256", new TextEncoder().encode(token));
  return hex(new Uint8Array(digest));
}

/** Lower-case hex of `bytes` (also for file digests). */
export { hex as toHex };
