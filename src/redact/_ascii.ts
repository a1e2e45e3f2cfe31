/**
 * Byte-class tables for the detectors' character loops. Indexed by the bytes
 * of `ScanInput.bytes`, where every non-ASCII unit is `0x80`, so 256 entries
 * cover every value without a bounds check.
 *
 * @module
 */

/** A 256-entry membership table: 1 at the code of each character of `chars`. */
export function table(chars: string): Uint8Array {
  const t = new Uint8Array(256);
  for (const c of chars) t[c.charCodeAt(0)] = 1;
  return t;
}

const ALNUM = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";

/** base64url (RFC 4648 §5): the alphabet of nearly every API token. */
export const BASE64URL = table(ALNUM + "_-");
/** base64 and base64url together, with padding: what the entropy fallback reads. */
export const BASE64_ANY = table(ALNUM + "_-+/=");
/** Characters of a setting's name: `DB_PASSWORD`, `spring.datasource.password`, `x-api-key`. */
export const IDENT = table(ALNUM + "_.-");

export const TAB = 9;
export const LF = 10;
export const CR = 13;
export const SPACE = 32;
export const DQUOTE = 34;
export const SQUOTE = 39;
export const BACKSLASH = 92;

/** True for a space or a tab. */
export function isBlank(b: number | undefined): boolean {
  return b === SPACE || b === TAB;
}
