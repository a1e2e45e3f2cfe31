/**
 * One operator log line per HTTP request: method, path (never the query: a
 * token could ride in it), status, time to the response's headers, the
 * remote address, the client id once its bearer was verified, and the MCP
 * session id. A streamed (SSE) response is logged when its headers are
 * ready; the calls on it have their own lines.
 *
 * @module
 */
import { type RequestScope, withRequestScope } from "./call_scope.ts";
import { operatorLog } from "./log.ts";
import { maskedPath } from "../links/mod.ts";

/** A request handler as the HTTP listener calls it (`I`: the listener's connection info). */
export type RequestHandler<I> = (request: Request, info: I) => Promise<Response>;

/**
 * Wraps `handler` so each request it answers is logged.
 *
 * @param handler The request pipeline.
 * @param remoteAddr Reads the peer's address from the listener's info.
 * @returns The same pipeline, logging.
 */
export function withRequestLog<I>(
  handler: RequestHandler<I>,
  remoteAddr: (info: I) => string,
): RequestHandler<I> {
  return async (request, info) => {
    const started = performance.now();
    const scope: RequestScope = { clientId: null };
    let status = 500;
    let sessionId: string | null = request.headers.get("mcp-session-id");
    try {
      const response = await withRequestScope(scope, () => handler(request, info));
      status = response.status;
      sessionId = response.headers.get("mcp-session-id") ?? sessionId;
      return response;
    } finally {
      try {
        logRequest(request, remoteAddr(info), status, scope, sessionId, started);
      } catch {
        // Logging must never break a request.
      }
    }
  };
}

function logRequest(
  request: Request,
  remote: string,
  status: number,
  scope: RequestScope,
  sessionId: string | null,
  started: number,
): void {
  const level = status >= 500 ? "error" : status >= 400 ? "warn" : "info";
  const log = operatorLog();
  if (!log.enabled(level)) return;
  const path = pathOf(request);
  log.write(level, "http_request", `${request.method} ${path} ${status}`, {
    method: request.method,
    path,
    status,
    duration_ms: Math.round((performance.now() - started) * 1000) / 1000,
    remote_addr: remote,
    client_id: scope.clientId,
    session_id: sessionId === null || !/^[\x21-\x7e]{1,128}$/.test(sessionId)
      ? undefined
      : sessionId,
  });
}

function pathOf(request: Request): string {
  try {
    // A download token is a capability: the log never shows it.
    const path = maskedPath(new URL(request.url).pathname);
    return path.length > 256 ? `${path.slice(0, 256)}...` : path;
  } catch {
    return "";
  }
}
