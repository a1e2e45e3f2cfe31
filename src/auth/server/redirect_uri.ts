/**
 * Redirect URI rules. The authorization code travels to this address, so it
 * must be one the client controls and cannot be quietly re-pointed: https
 * anywhere, or plain http only to this machine's loopback (OAuth 2.1 §2.3.1,
 * native apps per RFC 8252 §7.3). No fragment (RFC 6749 §3.1.2), no user
 * info, printable ASCII only so the text we compare is the text a browser
 * follows.
 *
 * @module
 */
import { isLoopbackHost } from "../../config/mod.ts";

/** Longest redirect URI accepted, in characters. */
export const MAX_REDIRECT_URI_LENGTH = 1000;

export type RedirectUriCheck =
  | { readonly ok: true; readonly url: URL }
  | { readonly ok: false; readonly reason: string };

/**
 * Checks one redirect URI as registered.
 *
 * @example
 * ```ts
 * checkRedirectUri("http://127.0.0.1:8765/callback").ok; // true
 * checkRedirectUri("http://evil.example/cb").ok; // false: plain http off-host
 * ```
 */
export function checkRedirectUri(raw: string): RedirectUriCheck {
  if (raw.length > MAX_REDIRECT_URI_LENGTH) {
    return { ok: false, reason: `is longer than ${MAX_REDIRECT_URI_LENGTH} characters` };
  }
  // The URL parser silently drops tabs and newlines; refuse them instead, so
  // the registered string and the parsed address cannot differ.
  if (!/^[\x21-\x7e]+$/.test(raw)) {
    return { ok: false, reason: "contains spaces, control or non-ASCII characters" };
  }
  if (raw.includes("#")) return { ok: false, reason: "has a fragment" };
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    return { ok: false, reason: "is not an absolute URL" };
  }
  if (url.username !== "" || url.password !== "") {
    return { ok: false, reason: "contains a user name or password" };
  }
  if (url.protocol === "https:") return { ok: true, url };
  if (url.protocol === "http:") {
    if (isLoopbackHost(url.hostname)) return { ok: true, url };
    return {
      ok: false,
      reason: "uses plain http on a host other than 127.0.0.1, [::1] or localhost",
    };
  }
  return {
    ok: false,
    reason: `uses the scheme "${url.protocol}"; only https or loopback http are allowed`,
  };
}
