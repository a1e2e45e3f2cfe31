/**
 * The headers of a download. Every answer is private to its one recipient
 * and must never be rendered as our own origin's content: the bytes came
 * from the jail, which the model (and whoever steers it) can write.
 *
 * - `X-Content-Type-Options: nosniff`: the browser keeps the type we send
 *   (never turns a "text" file into HTML or script).
 * - `Content-Security-Policy: sandbox`: should a browser render it anyway,
 *   it runs in an opaque origin with scripts, forms and plugins off. Sent on
 *   attachments too: it costs nothing and holds if a browser ignores the
 *   disposition.
 * - `Referrer-Policy: no-referrer`: the URL is the capability; a page must
 *   never pass it on in a `Referer`.
 * - `Cache-Control: private, no-store`: no shared cache keeps a copy past
 *   the link's revocation or expiry.
 *
 * @module
 */
import type { LinkRecord } from "./store.ts";

/**
 * RFC 6266 §4.3 `filename` fallback: printable ASCII only, with the
 * characters a quoted-string would have to escape (and `%`, which some
 * agents decode) replaced, so no agent can read a header split or a path.
 */
function asciiFallback(name: string): string {
  const safe = name.replace(/[^\x20-\x7e]|["\\%;]/g, "_").trim();
  // A name with nothing readable left (all non-ASCII) gets a plain word; filename* keeps the real one.
  return /[A-Za-z0-9]/.test(safe) ? safe : "download";
}

/**
 * RFC 5987 `ext-value` for `filename*`: UTF-8, percent-encoding every byte
 * outside `attr-char` (RFC 8187 §3.2.1).
 */
function extValue(name: string): string {
  const encoded = Array.from(new TextEncoder().encode(name), (byte) => {
    const char = String.fromCharCode(byte);
    return /[A-Za-z0-9!#$&+.^_`|~-]/.test(char)
      ? char
      : `%${byte.toString(16).toUpperCase().padStart(2, "0")}`;
  }).join("");
  return `UTF-8''${encoded}`;
}

/**
 * `Content-Disposition` for a file called `name` (the last segment of its path).
 *
 * @example
 * ```ts
 * contentDisposition("résumé.pdf", false);
 * // attachment; filename="r_sum_.pdf"; filename*=UTF-8''r%C3%A9sum%C3%A9.pdf
 * ```
 */
export function contentDisposition(name: string, inline: boolean): string {
  return `${inline ? "inline" : "attachment"}; filename="${asciiFallback(name)}"; filename*=${
    extValue(name)
  }`;
}

/** The headers every download of `record` carries. */
export function downloadHeaders(record: LinkRecord): Headers {
  const name = record.path.slice(record.path.lastIndexOf("/") + 1);
  return new Headers({
    "content-type": record.inline ? record.inline_type : "application/octet-stream",
    "content-length": String(record.size),
    "content-disposition": contentDisposition(name, record.inline),
    "x-content-type-options": "nosniff",
    "content-security-policy": "sandbox",
    "referrer-policy": "no-referrer",
    "cache-control": "private, no-store",
  });
}

/**
 * The one answer for every token that does not download: expired, used up,
 * revoked, guessed or malformed alike, so a prober learns nothing from it.
 */
export function notFound(): Response {
  return new Response(null, {
    status: 404,
    headers: { "cache-control": "no-store", "referrer-policy": "no-referrer" },
  });
}
