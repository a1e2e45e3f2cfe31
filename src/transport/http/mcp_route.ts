/**
 * `/mcp`: the Streamable HTTP endpoint. Order per request, fixed:
 *
 * 1. authenticate (bearer header only; the body is not touched yet),
 * 2. read the body under the size limit,
 * 3. parse it once, refuse tool calls the token has no scope for (403),
 * 4. a 2026-07-28 request (per-request `_meta` envelope) goes to the
 *    stateless route (`modern_route.ts`); a 2025 one goes on:
 * 5. find the caller's own session (or create one on `initialize`),
 * 6. hand the parsed body to the SDK transport.
 *
 * Deny on failure: every branch that is not the happy path answers with a
 * refusal, never by passing the request on.
 *
 * @module
 */
import type { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import type { AuthorizationServer } from "../../auth/mod.ts";
import { CallRegistry } from "../../server/mod.ts";
import type { CallerIdentity } from "../../tools/caller.ts";
import type { TransportAudit } from "./_audit_events.ts";
import { jsonError, jsonRpcError, jsonRpcErrorFor, sessionNotFound } from "./_responses.ts";
import { requestIdOf } from "../pending_requests.ts";
import { onBodyCancel } from "./body_cancel.ts";
import { TrackedHttpTransport } from "./tracked_transport.ts";
import { declaredLength, tooLargeResponse } from "./body_limit.ts";
import { type ByteBudget, readWithinBudget } from "../../streams/mod.ts";
import {
  CLOSE_GRACE_MS,
  type Session,
  sessionLimitResponse,
  sessionOwner,
  type SessionTable,
} from "./sessions.ts";
import {
  containsInitialize,
  containsResponses,
  scopedMethodsIn,
  type ToolCall,
  toolCallsIn,
} from "./tool_calls.ts";
import { noteRequestClient } from "../../telemetry/mod.ts";
import type { ModernRoute } from "./modern_route.ts";

/** What the `/mcp` route needs. */
export interface McpRouteDeps {
  /** `[http] max_http_request_bytes` (0 = off). */
  readonly maxRequestBytes: number;
  /** Shared by every body being read at once. */
  readonly bodyBudget: ByteBudget;
  /** Interval of the `: keepalive` comments on event streams. */
  readonly sseKeepAliveMs: number;
  readonly audit: TransportAudit;
  /** The bearer checker, or null when `[auth] mode = "none"`. */
  readonly auth: AuthorizationServer | null;
  /** `[auth] allow_localhost_bypass`. */
  readonly localhostBypass: boolean;
  readonly sessions: SessionTable;
  /** The 2026-07-28 (stateless) route. */
  readonly modern: ModernRoute;
  /** Builds the MCP server of a new session for its caller. */
  readonly createServer: (caller: CallerIdentity, calls: CallRegistry) => McpServer;
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
    // Ending a session cancels its calls in flight (their process trees are
    // killed), which needs shell:execute as job_cancel does: a narrower token
    // of the same client must not do it to a session a wider one opened.
    if (
      method === "DELETE" && caller.scopes !== null && caller.clientId !== null &&
      deps.auth !== null && !caller.scopes.has("shell:execute")
    ) {
      await deps.audit.writeEvent("scope_denied", {
        client_id: caller.clientId,
        method: "DELETE /mcp",
        scope: "shell:execute",
      });
      return deps.auth.insufficientScope("shell:execute");
    }
    if (method === "DELETE") {
      // The SDK ends every stream of the session at once: first let its
      // cancelled calls answer CANCELLED on them.
      await deps.sessions.cancelAndDrain(
        found.session,
        "The client ended its MCP session.",
        CLOSE_GRACE_MS,
      );
    }
    return await found.session.transport.handleRequest(request);
  }

  const body = await readWithinBudget(request.body, deps.maxRequestBytes, deps.bodyBudget);
  if (!body.ok) {
    const status = body.reason === "busy" ? 503 : 413;
    await deps.audit.writeEvent("http_rejected", {
      method,
      path: "/mcp",
      declared_bytes: declaredLength(request),
      observed_bytes: body.observed,
      limit: body.reason === "busy" ? deps.bodyBudget.total : deps.maxRequestBytes,
      status,
    });
    if (body.reason === "busy") {
      return jsonError(
        503,
        "server_busy",
        "The server is reading too many request bodies at once; try again shortly.",
        { "retry-after": "1" },
      );
    }
    return tooLargeResponse(deps.maxRequestBytes);
  }
  try {
    return await handleBody(deps, request, caller, connection, sessionId, body.bytes);
  } finally {
    // The bytes were counted against every body in flight until the request
    // was handed on.
    body.release();
  }
}

async function handleBody(
  deps: McpRouteDeps,
  request: Request,
  caller: CallerIdentity,
  connection: ConnectionInfo,
  sessionId: string | null,
  bytes: Uint8Array,
): Promise<Response> {
  let parsedBody: unknown;
  try {
    parsedBody = JSON.parse(new TextDecoder().decode(bytes));
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

  const era = deps.modern.classify(request, parsedBody);
  if (era.kind !== "legacy") {
    await auditToolCalls(deps, caller, calls);
    return await deps.modern.handle(request, caller, parsedBody, era);
  }
  // A 2025 session's task store and job resources check the scopes its
  // session opened with; the token of this request may be narrower. (A 2026
  // request is judged on its own token by its handler.)
  if (caller.scopes !== null && caller.clientId !== null && deps.auth !== null) {
    // An answer to the server's question (an approval) runs what it approves.
    if (containsResponses(parsedBody) && !caller.scopes.has("shell:execute")) {
      await deps.audit.writeEvent("scope_denied", {
        client_id: caller.clientId,
        method: "a response to the server's request",
        scope: "shell:execute",
      });
      return deps.auth.insufficientScope("shell:execute");
    }
    for (const { method, scope } of scopedMethodsIn(parsedBody)) {
      if (!caller.scopes.has(scope)) {
        await deps.audit.writeEvent("scope_denied", {
          client_id: caller.clientId,
          method,
          scope,
        });
        return deps.auth.insufficientScope(scope);
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

  await auditToolCalls(deps, caller, calls);
  return await dispatch(found.session, request, parsedBody, calls.map((call) => call.id));
}

async function auditToolCalls(
  deps: McpRouteDeps,
  caller: CallerIdentity,
  calls: readonly ToolCall[],
): Promise<void> {
  if (caller.clientId === null) return;
  for (const call of calls) {
    await deps.audit.writeEvent("tool_call", {
      client_id: caller.clientId,
      request_id: call.requestId,
      tool: call.tool ?? "",
    });
  }
}

/**
 * Hands a parsed body to the session's transport, refusing it whole when one
 * of its request ids is still unanswered (or repeats within the batch): the
 * SDK would otherwise answer only the later of the two.
 */
async function dispatch(
  session: Session,
  request: Request,
  parsedBody: unknown,
  toolCallIds: readonly (string | number | null)[],
): Promise<Response> {
  const messages = Array.isArray(parsedBody) ? parsedBody : [parsedBody];
  const pending = session.transport.pending;
  const added: (string | number)[] = [];
  for (const message of messages) {
    const id = requestIdOf(message);
    if (id === null) continue;
    if (!pending.add(id)) {
      for (const mine of added) pending.settle(mine);
      return jsonRpcErrorFor(
        409,
        -32600,
        `Invalid Request: request id ${
          JSON.stringify(id)
        } is already in flight on this session; nothing was run.`,
        id,
      );
    }
    added.push(id);
  }
  const response = await session.transport.handleRequest(request, { parsedBody });
  if (response.status >= 400 || response.body === null || added.length === 0) {
    // The SDK answered in the HTTP response itself (or refused): nothing
    // will come through send() for these ids.
    if (response.status >= 400) { for (const id of added) pending.settle(id); }
    return response;
  }
  // A client that closes the stream its call is to be answered on has given
  // up on the call: cancel it, so its command is killed and the outcome
  // audited as CANCELLED instead of running on unobserved.
  const ids = toolCallIds.filter((id): id is string | number => id !== null);
  if (ids.length === 0) return response;
  return onBodyCancel(response, () => {
    for (const id of ids) session.calls.cancel(id, "The client closed the response stream.");
  });
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
  noteRequestClient(verified.clientId);
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
  const calls = new CallRegistry();
  const server = deps.createServer(caller, calls);
  const transport = new TrackedHttpTransport({
    sessionIdGenerator: () => crypto.randomUUID(),
    // A comment line now and then keeps proxies (and clients' idle
    // watchdogs) from timing out a stream whose command runs long.
    keepAliveMs: deps.sseKeepAliveMs,
    onsessioninitialized: (id: string) => {
      deps.sessions.add({
        id,
        owner,
        transport,
        server,
        calls,
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
