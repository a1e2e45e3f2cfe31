/**
 * Builds the redirect back to the client. Every authorization response,
 * success or error, carries `iss` (RFC 9207, MCP 2026-07-28), so a client
 * talking to several authorization servers can tell who answered (mix-up
 * defence).
 *
 * @module
 */

/**
 * A redirect to `redirectUri` with `params` added to its query (existing
 * query parameters of the registered URI are kept, RFC 6749 §3.1.2).
 */
export function redirectTo(
  status: 302 | 303,
  redirectUri: string,
  params: Readonly<Record<string, string | null>>,
  issuer: string,
): Response {
  const url = new URL(redirectUri);
  for (const [name, value] of Object.entries(params)) {
    if (value !== null) url.searchParams.set(name, value);
  }
  url.searchParams.set("iss", issuer);
  return new Response(null, {
    status,
    headers: {
      location: url.href,
      "cache-control": "no-store",
      "pragma": "no-cache",
      "referrer-policy": "no-referrer",
    },
  });
}
