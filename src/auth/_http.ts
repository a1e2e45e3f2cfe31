/**
 * Small web-standard helpers shared by the OAuth endpoints: JSON and OAuth
 * error responses, bounded body reading, random identifiers.
 *
 * @module
 */
import { readWithin } from "../streams/mod.ts";
import { encodeBase64Url } from "../encoding/mod.ts";

/** RFC 6749 §5.1: token (and other credential-bearing) responses must not be cached. */
export const NO_STORE: Readonly<Record<string, string>> = Object.freeze({
  "cache-control": "no-store",
  "pragma": "no-cache",
});

/**
 * Public, cookie-less endpoints (metadata, registration, token) may be called
 * from a browser-based MCP client such as the Inspector; `*` is safe because
 * no ambient credential is ever accepted on them.
 */
export const CORS: Readonly<Record<string, string>> = Object.freeze({
  "access-control-allow-origin": "*",
  "access-control-allow-methods": "GET, POST, OPTIONS",
  "access-control-allow-headers": "content-type, authorization, mcp-protocol-version",
  "access-control-max-age": "600",
});

/** A JSON response with the given status and extra headers. */
export function jsonResponse(
  status: number,
  body: unknown,
  headers: Readonly<Record<string, string>> = {},
): Response {
  return new Response(JSON.stringify(body), {
    status,
    headers: { "content-type": "application/json", ...headers },
  });
}

/** An OAuth error response (RFC 6749 §5.2 shape), never cached. */
export function oauthError(
  status: number,
  error: string,
  description: string,
  headers: Readonly<Record<string, string>> = {},
): Response {
  return jsonResponse(status, { error, error_description: description }, {
    ...NO_STORE,
    ...headers,
  });
}

export type ReadBodyResult =
  | { readonly ok: true; readonly bytes: Uint8Array }
  | { readonly ok: false; readonly declared: number | null; readonly observed: number };

/**
 * Reads the request body, refusing it once it exceeds `limit` bytes: a
 * declared `Content-Length` above the limit is refused without reading, and
 * a chunked body is cut off the moment the count passes the limit.
 */
export async function readBodyLimited(request: Request, limit: number): Promise<ReadBodyResult> {
  // The OAuth endpoints always have a limit (the loader bounds it below by
  // 256); 0 would mean "no limit" to the shared reader.
  if (!(limit > 0)) throw new RangeError(`An OAuth body limit must be positive, got ${limit}.`);
  const lengthHeader = request.headers.get("content-length");
  const declared = lengthHeader !== null && /^\d+$/.test(lengthHeader)
    ? Number(lengthHeader)
    : null;
  if (declared !== null && declared > limit) return { ok: false, declared, observed: 0 };
  const read = await readWithin(request.body, limit);
  return read.ok ? read : { ok: false, declared, observed: read.observed };
}

/** The media type of a request, lower-cased, without parameters. */
export function mediaType(request: Request): string {
  const header = request.headers.get("content-type") ?? "";
  return (header.split(";")[0] ?? "").trim().toLowerCase();
}

/** `bytes` random bytes as base64url: identifiers and codes nobody can guess. */
export function randomToken(bytes: number): string {
  return encodeBase64Url(crypto.getRandomValues(new Uint8Array(bytes)));
}

export type FormResult =
  | { readonly ok: true; readonly params: ReadonlyMap<string, string> }
  | { readonly ok: false; readonly duplicate: string };

/**
 * Parses `application/x-www-form-urlencoded` text into a map. RFC 6749 §3.1:
 * "Request and response parameters MUST NOT be included more than once", so a
 * repeated name is refused instead of silently taking the first or last.
 */
export function parseForm(text: string): FormResult {
  return paramsToMap(new URLSearchParams(text));
}

/** The same rule for a query string already parsed by `URL`. */
export function paramsToMap(search: URLSearchParams): FormResult {
  const params = new Map<string, string>();
  for (const [name, value] of search) {
    if (params.has(name)) return { ok: false, duplicate: name };
    params.set(name, value);
  }
  return { ok: true, params };
}
