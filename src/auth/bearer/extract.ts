/**
 * Finds the bearer token in a request, and only in the `Authorization`
 * header: RFC 6750 §2.3's query parameter puts tokens into logs, history and
 * `Referer` headers (and OAuth 2.1 removed it), so a request carrying one is
 * refused outright rather than ignored. The body is never read.
 *
 * @module
 */
import type { BearerFailureReason } from "./verify.ts";

/** RFC 6750 §2.1 `b64token`. */
const BEARER = /^Bearer +([A-Za-z0-9\-._~+/]+=*)$/i;

export type ExtractResult =
  | { readonly ok: true; readonly token: string }
  | { readonly ok: false; readonly reason: BearerFailureReason };

/** Extracts the token, or says why there is none usable. */
export function extractBearerToken(request: Request): ExtractResult {
  const url = new URL(request.url);
  if (url.searchParams.has("access_token")) return { ok: false, reason: "token_in_query" };
  const header = request.headers.get("authorization");
  if (header === null || header.trim() === "") return { ok: false, reason: "missing_token" };
  const match = BEARER.exec(header.trim());
  if (match === null) return { ok: false, reason: "malformed_header" };
  return { ok: true, token: match[1] as string };
}
