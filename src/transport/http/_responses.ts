/**
 * The transport's own error answers. Two families, kept apart by who reads
 * them: plain JSON (`{ error, error_description }`) for refusals before MCP
 * is involved, and JSON-RPC errors for MCP-level problems on `/mcp`, worded
 * like the SDK's own so clients handle both alike.
 *
 * @module
 */

/** A plain JSON error answer. */
export function jsonError(
  status: number,
  error: string,
  description: string,
  headers: Record<string, string> = {},
): Response {
  return new Response(JSON.stringify({ error, error_description: description }), {
    status,
    headers: { "content-type": "application/json", "cache-control": "no-store", ...headers },
  });
}

/** A JSON-RPC error answer with `id: null` (the request could not be attributed). */
export function jsonRpcError(
  status: number,
  code: number,
  message: string,
  headers: Record<string, string> = {},
): Response {
  return new Response(JSON.stringify({ jsonrpc: "2.0", error: { code, message }, id: null }), {
    status,
    headers: { "content-type": "application/json", ...headers },
  });
}

/** A JSON-RPC error answer to the request with `id`. */
export function jsonRpcErrorFor(
  status: number,
  code: number,
  message: string,
  id: string | number,
): Response {
  return new Response(JSON.stringify({ jsonrpc: "2.0", error: { code, message }, id }), {
    status,
    headers: { "content-type": "application/json" },
  });
}

/** The answer for an unknown or foreign session id (the SDK's wording and code). */
export function sessionNotFound(): Response {
  return jsonRpcError(404, -32001, "Session not found");
}
