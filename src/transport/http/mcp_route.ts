/**
 * `/mcp`: the Streamable HTTP endpoint. Order per request, fixed:
 *
 * 1. authenticate (bearer header only; the body is not touched yet),
 * 2. read the body under the size limit,
 * 3. parse it once, refuse tool calls the token has no scope for (403),
 * 4. find the caller's own session (or create one on `initialize`),
 * 5. hand the parsed body to the SDK transport.
 *
 * Deny on failure: every branch that is not the happy path answers with a
 * refusal, never by passing the request on.
 *
 * @module
 */
import type { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { WebStandardStreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js";
import type { AuthorizationServer } from "../../auth/mod.ts";
import type { CallerIdentity } from "../../tools/caller.ts";
import type { TransportAudit } from "./_audit_events.ts";
import { jsonRpcError, sessionNotFound } from "./_responses.ts";
import { declaredLength, readBodyWithin, tooLargeResponse } from "./body_limit.ts";
import { type Session, sessionLimitResponse, sessionOwner, type SessionTable } from "./sessions.ts";
import { containsInitialize, toolCallsIn } from "./tool_calls.ts";

/** What the `/mcp` route needs. */
export interface McpRouteDeps {
  /** `[http] max_http_request_bytes` (0 = off). */
  readonly maxRequestBytes: number;
  readonly audit: TransportAudit;
  /** The bearer checker, or null when `[auth] mode = "none"`. */
  readonly auth: AuthorizationServer | null;
  /** `[auth] allow_localhost_bypass`. */
  readonly localhostBypass: boolean;
  readonly sessions: SessionTable;
  /** Builds the MCP server of a new session for its caller. */
  readonly createServer: (caller: CallerIdentity) => McpServer;
}

/** Facts about the connection, from `Deno.serve`. */
export interface ConnectionInfo {
  readonly remoteAddr: string;
  readonly loopback: boolean;
}

/** The caller of unauthenticated requests (auth off, or the loopback bypass). */
const ANONYMOUS: CallerIdentity = Object.freeze({
  transport: "http",
  clientId: null,
  scopes: null,
});

/** Handles one request to `/mcp`. */
export async function handleMcp(
  deps: McpRouteDeps,
  request: Request,
  connection: ConnectionInfo,
): Promise<Response> {
  const method = request.method;
  if (method !== "POST" && method !== "GET" && method !== "DELETE") {
    return jsonRpcError(405, -32000, "Method not allowed.", { allow: "GET, POST, DELETE" });
  }
  const authenticated = await authenticate(deps, request, connection);
  if (!authenticated.ok) return authenticated.response;
  const caller = authenticated.caller;
  const sessionId = request.headers.get("mcp-session-id");

  if (method !== "POST") {
    if (sessionId === null) {
      return jsonRpcError(400, -32000, "Bad Request: Mcp-Session-Id header is required");
    }
    const found = await findSession(deps, sessionId, caller, connection);
    if (!found.ok) return found.response;
    return await found.session.transport.handleRequest(request);
  }

  const body = await readBodyWithin(request.body, deps.maxRequestBytes);
  if (!body.ok) {
    await deps.audit.writeEvent("http_rejected", {
      method,
      path: "/mcp",
      declared_bytes: declaredLength(request),
      observed_bytes: body.observed,
      limit: deps.maxRequestBytes,
      status: 413,
    });
    return tooLargeResponse(deps.maxRequestBytes);
  }
  let parsedBody: unknown;
  try {
    parsedBody = JSON.parse(new TextDecoder().decode(body.bytes));
  } catch {
    return jsonRpcError(400, -32700, "Parse error: Invalid JSON");
  }

  const calls = toolCallsIn(parsedBody);
  if (caller.scopes !== null && caller.clientId !== null && deps.auth !== null) {
    for (const call of calls) {
      if (call.scope !== null && !caller.scopes.has(call.scope)) {
        await deps.audit.writeEvent("scope_denied", {
          client_id: caller.clientId,
          tool: call.tool ?? "",
          scope: call.scope,
        });
        return deps.auth.insufficientScope(call.scope);
      }
    }
  }

  if (sessionId === null) {
    if (!containsInitialize(parsedBody)) {
      return jsonRpcError(400, -32000, "Bad Request: Mcp-Session-Id header is required");
    }
    return await startSession(deps, request, parsedBody, caller, connection);
  }
  const found = await findSession(deps, sessionId, caller, connection);
  if (!found.ok) return found.response;

  if (caller.clientId !== null) {
    for (const call of calls) {
      await deps.audit.writeEvent("tool_call", {
        client_id: caller.clientId,
        request_id: call.requestId,
        tool: call.tool ?? "",
      });
    }
  }
  return await found.session.transport.handleRequest(request, { parsedBody });
}

type Authenticated =
  | { readonly ok: true; readonly caller: CallerIdentity }
  | { readonly ok: false; readonly response: Response };

async function authenticate(
  deps: McpRouteDeps,
  request: Request,
  connection: ConnectionInfo,
): Promise<Authenticated> {
  if (deps.auth === null) return { ok: true, caller: ANONYMOUS };
  // The bypass serves a loopback request that brings no token at all; one that
  // does bring a token is checked, so a bad token is never silently ignored.
  if (deps.localhostBypass && connection.loopback && !request.headers.has("authorization")) {
    const url = new URL(request.url);
    if (!url.searchParams.has("access_token")) return { ok: true, caller: ANONYMOUS };
  }
  const verified = await deps.auth.verifyBearer(request, { remoteAddr: connection.remoteAddr });
  if (!verified.ok) return { ok: false, response: verified.response };
  return {
    ok: true,
    caller: Object.freeze({
      transport: "http",
      clientId: verified.clientId,
      scopes: verified.scopes,
    }),
  };
}

type Found =
  | { readonly ok: true; readonly session: Session }
  | { readonly ok: false; readonly response: Response };

async function findSession(
  deps: McpRouteDeps,
  sessionId: string,
  caller: CallerIdentity,
  connection: ConnectionInfo,
): Promise<Found> {
  const found = deps.sessions.lookup(
    sessionId,
    sessionOwner(caller.clientId, connection.remoteAddr),
  );
  if (found.ok) return found;
  if (found.reason === "other_client") {
    await deps.audit.writeEvent("session_refused", {
      client_id: caller.clientId,
      remote_addr: connection.remoteAddr,
    });
  }
  // Same answer for "never existed" and "someone else's": no oracle.
  return { ok: false, response: sessionNotFound() };
}

async function startSession(
  deps: McpRouteDeps,
  request: Request,
  parsedBody: unknown,
  caller: CallerIdentity,
  connection: ConnectionInfo,
): Promise<Response> {
  const owner = sessionOwner(caller.clientId, connection.remoteAddr);
  const room = deps.sessions.reserve(owner);
  if (!room.ok) {
    await deps.audit.writeEvent("session_limit", {
      client_id: caller.clientId,
      remote_addr: connection.remoteAddr,
      limit: room.limit,
      max: room.max,
    });
    return sessionLimitResponse(room);
  }
  try {
    return await openSession(deps, request, parsedBody, caller, owner);
  } finally {
    room.reservation.release();
  }
}

async function openSession(
  deps: McpRouteDeps,
  request: Request,
  parsedBody: unknown,
  caller: CallerIdentity,
  owner: string,
): Promise<Response> {
  const server = deps.createServer(caller);
  const transport = new WebStandardStreamableHTTPServerTransport({
    sessionIdGenerator: () => crypto.randomUUID(),
    onsessioninitialized: (id: string) => {
      deps.sessions.add({
        id,
        owner,
        transport,
        server,
        lastSeen: performance.now(),
      });
    },
  });
  // Set before connect: the SDK chains its own handler after ours.
  transport.onclose = () => {
    if (transport.sessionId !== undefined) deps.sessions.forget(transport.sessionId);
  };
  await server.connect(transport);
  const response = await transport.handleRequest(request, { parsedBody });
  if (transport.sessionId === undefined) {
    // The SDK refused the initialize request: nothing to keep.
    await transport.close().catch(() => {});
    await server.close().catch(() => {});
  }
  return response;
}
