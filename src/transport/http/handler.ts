/**
 * The HTTP request pipeline in front of every route:
 *
 * 1. size: a declared `Content-Length` over `max_http_request_bytes` gets 413
 *    from the headers alone;
 * 2. `/healthz` and `/readyz` (booleans only, answered to any Host);
 *    then DNS rebinding: a foreign `Host` or `Origin` gets 403;
 * 3. routing: `/mcp` (which authenticates before it reads the body),
 *    `/download/{token}` (the token is the capability; src/links/),
 *    `/approvals` (the operator's page behind the admin PIN), then the
 *    OAuth and well-known routes of the authorization server (which get a
 *    body metered under the same limit, beneath their own smaller one),
 *    else 404.
 *
 * @module
 */
import type { AuthorizationServer } from "../../auth/mod.ts";
import type { TransportAudit } from "./_audit_events.ts";
import { jsonError } from "./_responses.ts";
import { isLoopbackName } from "./address.ts";
import {
  declaredLength,
  declaredTooLarge,
  limitRequest,
  RequestTooLargeError,
  tooLargeResponse,
} from "./body_limit.ts";
import type { HostCheck } from "./host_check.ts";
import type { ConnectionRequestInfo } from "./listener.ts";
import type { ConnectionInfo } from "./mcp_route.ts";
import { isDownloadPath, maskedPath } from "../../links/mod.ts";
import { APPROVAL_PAGE_PATH } from "../../approvals/page/mod.ts";

/** What the pipeline needs. */
export interface HandlerDeps {
  /** `[http] max_http_request_bytes` (0 = off). */
  readonly maxRequestBytes: number;
  readonly hostCheck: HostCheck;
  readonly audit: TransportAudit;
  /** The OAuth routes, or null when `[auth] mode = "none"`. */
  readonly auth: AuthorizationServer | null;
  /** The `/mcp` route. */
  readonly mcp: (request: Request, connection: ConnectionInfo) => Promise<Response>;
  /** `GET /download/{token}` (src/links/), or null when links are off. */
  readonly download?: ((request: Request, remoteAddr: string) => Promise<Response>) | null;
  /** `/approvals`, the operator's approval page (src/approvals/page/), or null when off. */
  readonly approvals?: ((request: Request, remoteAddr: string) => Promise<Response>) | null;
  /** `/healthz` and `/readyz` (src/health/): null for any other path. */
  readonly health?: (request: Request, path: string) => Promise<Response | null>;
}

/** The path MCP is served at; also the canonical resource's path. */
export const MCP_PATH = "/mcp";

/** Builds the request handler the listener calls for every request. */
export function createHttpHandler(
  deps: HandlerDeps,
): (request: Request, info: ConnectionRequestInfo) => Promise<Response> {
  const limit = deps.maxRequestBytes;
  return async (request, info) => {
    const remoteAddr = info.remoteAddr.hostname;
    const connection: ConnectionInfo = { remoteAddr, loopback: isLoopbackName(remoteAddr) };
    const path = safePath(request);

    if (declaredTooLarge(request, limit)) {
      await deps.audit.writeEvent("http_rejected", {
        method: request.method,
        path,
        declared_bytes: declaredLength(request),
        observed_bytes: null,
        limit,
        status: 413,
      });
      return tooLargeResponse(limit);
    }

    // Before the Host check: probes address a pod by its IP (booleans only, see src/health/).
    const health = deps.health === undefined ? null : await deps.health(request, path);
    if (health !== null) return health;

    const hosts = deps.hostCheck.check(request);
    if (!hosts.ok && !isApprovalPostWithNullOrigin(request, path, hosts, deps.auth !== null)) {
      await deps.audit.writeEvent("http_forbidden", {
        method: request.method,
        path,
        header: hosts.header,
        reason: hosts.reason,
        remote_addr: remoteAddr,
      });
      return jsonError(403, `forbidden_${hosts.header}`, hosts.reason);
    }

    if (path === MCP_PATH) return await deps.mcp(request, connection);
    if (deps.download && isDownloadPath(path)) return await deps.download(request, remoteAddr);
    if (deps.approvals && path === APPROVAL_PAGE_PATH) {
      return await deps.approvals(request, remoteAddr);
    }

    if (deps.auth !== null) {
      const limited = limitRequest(request, limit);
      let response: Response | null;
      try {
        response = await deps.auth.handle(limited.request, { remoteAddr });
      } catch (error) {
        if (!(error instanceof RequestTooLargeError) && !limited.meter.exceeded) throw error;
        response = null;
      }
      // Whatever the route made of a stream we cut off, the answer is 413.
      if (limited.meter.exceeded) {
        await deps.audit.writeEvent("http_rejected", {
          method: request.method,
          path,
          declared_bytes: declaredLength(request),
          observed_bytes: limited.meter.observed,
          limit,
          status: 413,
        });
        return tooLargeResponse(limit);
      }
      if (response !== null) return response;
    }
    return jsonError(404, "not_found", `There is nothing at "${path}".`);
  };
}

/**
 * The one exception to the Origin check: the approval form posted with
 * `Origin: null` (a browser's privacy setting can send that even for our own
 * page). It is still refused unless its form token, which only our page
 * holds, is valid: the authorization server judges it. Host is never waived.
 */
function isApprovalPostWithNullOrigin(
  request: Request,
  path: string,
  result: { readonly header: "host" | "origin" },
  authOn: boolean,
): boolean {
  return authOn && result.header === "origin" && request.method === "POST" &&
    path === "/authorize" && request.headers.get("origin") === "null";
}

/**
 * The URL path (never the query: a token could ride in it). A download
 * path's last segment is the download token itself, so it is masked: this
 * is the path the audit records.
 */
function safePath(request: Request): string {
  try {
    const path = new URL(request.url).pathname;
    return maskedPath(path);
  } catch {
    return "";
  }
}
