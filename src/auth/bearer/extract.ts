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

/** The token text, or why the request carries none that may be used. */
export type ExtractResult =
  | { readonly ok: true; readonly token: string }
  | { readonly ok: false; readonly reason: BearerFailureReason };

/**
 * Extracts the token, or says why there is none usable.
 *
 * @param request The HTTP request; only its URL and `Authorization` header are read.
 * @returns The token text, or the failure reason the audit log and the refusal use.
 *
 * @example
 * ```ts
 * import { extractBearerToken } from "./extract.ts";
 * const headers = { authorization: "Bearer abc.def.ghi" };
 * extractBearerToken(new Request("http://127.0.0.1/mcp", { headers }));
 * // { ok: true, token: "abc.def.ghi" }
 * extractBearerToken(new Request("http://127.0.0.1/mcp?access_token=abc"));
 * // { ok: false, reason: "token_in_query" }
 * ```
 */
export function extractBearerToken(request: Request): ExtractResult {
  const url = new URL(request.url);
  if (url.searchParams.has("access_token")) return { ok: false, reason: "token_in_query" };
  const header = request.headers.get("authorization");
  if (header === null || header.trim() === "") return { ok: false, reason: "missing_token" };
  const match = BEARER.exec(header.trim());
  if (match === null) return { ok: false, reason: "malformed_header" };
  return { ok: true, token: match[1] as string };
}
