/**
 * Encodings every layer shares: unpadded base64url, and text made visible
 * for a human who decides on it.
 *
 * @example
 * ```ts
 * import { decodeBase64Url, encodeBase64Url } from "./mod.ts";
 * const text = encodeBase64Url(crypto.getRandomValues(new Uint8Array(16)));
 * decodeBase64Url(text)?.length; // 16
 * ```
 *
 * @module
 */
export { decodeBase64Url, encodeBase64Url } from "./base64url.ts";
export { visibleText } from "./visible_text.ts";
