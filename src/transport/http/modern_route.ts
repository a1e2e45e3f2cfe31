/**
 * `/mcp` for 2026-07-28 requests (stateless: no session, the version,
 * client info and capabilities in every request's `_meta`). The route has
 * already authenticated the caller, read the body under its limit and
 * checked the tool's scope; this module classifies the request with the SDK
 * (the same predicate its handler uses), writes an audit record for every
 * request the protocol checks refuse (header/body mismatch, missing
 * envelope, unsupported version), and hands the rest to the SDK v2 handler,
 * whose server instance serves this one request for this caller.
 *
 * A client that closes the response stream has given up on its call (the
 * spec: the server MUST treat the close as cancellation): the call's signal
 * is aborted, so its command is killed and audited as cancelled.
 *
 * @module
 */
import {
  classifyInboundRequest,
  createMcpHandler,
  type InboundClassificationOutcome,
  type McpRequestContext,
} from "@modelcontextprotocol/server";
import { CallRegistry } from "../../server/calls.ts";
import type { CallerIdentity } from "../../tools/caller.ts";
import { MODERN_ERA, type ModernEra } from "../../protocol/mod.ts";
import type { TransportAudit } from "./_audit_events.ts";
import { onBodyCancel } from "./body_cancel.ts";

/** The 2026 route of one HTTP server. */
export interface ModernRoute {
  /**
   * The request's era by the SDK's classifier: `legacy` goes on to the 2025
   * session handling; anything else (served or refused) is answered here.
   */
  classify(request: Request, parsedBody: unknown): InboundClassificationOutcome;
  /** Answers a request `classify` did not route to the 2025 era. */
  handle(
    request: Request,
    caller: CallerIdentity,
    parsedBody: unknown,
    outcome: InboundClassificationOutcome,
  ): Promise<Response>;
  /** Cancels every call in flight (shutdown). */
  cancelAll(reason: string): void;
}

interface Served {
  readonly caller: CallerIdentity;
  readonly calls: CallRegistry;
}

/** Builds the route for `era`. */
export function createModernRoute(
  era: ModernEra,
  audit: TransportAudit,
  keepAliveMs: number,
): ModernRoute {
  // The SDK hands the factory the request it was given: the caller rides on
  // that object, never on anything the client sent.
  const served = new WeakMap<Request, Served>();
  const inflight = new Set<AbortController>();
  const factory = (ctx: McpRequestContext) => {
    const found = ctx.requestInfo === undefined ? undefined : served.get(ctx.requestInfo);
    if (found === undefined) {
      throw new Error("A 2026-07-28 request reached the SDK without its caller.");
    }
    return era.serverFor(found.caller, found.calls);
  };
  // 2025 traffic never reaches these handlers: it keeps its sessions.
  const handler = createMcpHandler(factory, { legacy: "reject", keepAliveMs });
  // A tool call is answered on an event stream that starts at once: a client
  // that closes it is seen at once (and the call cancelled), and the `:`
  // keep-alive comments keep proxies from timing out a long command.
  const streaming = createMcpHandler(factory, {
    legacy: "reject",
    responseMode: "sse",
    keepAliveMs,
  });

  return {
    classify(request, parsedBody) {
      return classifyInboundRequest({
        httpMethod: request.method,
        ...optionalHeader("protocolVersionHeader", request.headers.get("mcp-protocol-version")),
        ...optionalHeader("mcpMethodHeader", request.headers.get("mcp-method")),
        ...optionalHeader("mcpNameHeader", request.headers.get("mcp-name")),
        body: parsedBody,
      });
    },
    async handle(request, caller, parsedBody, outcome) {
      if (outcome.kind === "reject") {
        await audit.writeEvent("protocol_refused", {
          protocol_era: MODERN_ERA,
          transport: "http",
          client_id: caller.clientId,
          check: outcome.rung,
          jsonrpc_code: outcome.code,
          method: methodOf(parsedBody),
          mcp_method_header: request.headers.get("mcp-method"),
          mcp_name_header: request.headers.get("mcp-name"),
        });
      }
      const controller = new AbortController();
      // The body was read once, by the route; the SDK gets the parsed value
      // and a request whose signal only a closed response stream aborts.
      const proxied = new Request(request.url, {
        method: request.method,
        headers: request.headers,
        signal: controller.signal,
      });
      served.set(proxied, { caller, calls: new CallRegistry() });
      inflight.add(controller);
      // Until the answer starts, a dropped connection is the only sign the
      // client gave up; after that, the body's cancel is.
      const onDisconnect = () => controller.abort(new Error("The client closed the connection."));
      request.signal.addEventListener("abort", onDisconnect, { once: true });
      let response: Response;
      try {
        const chosen = methodOf(parsedBody) === "tools/call" ? streaming : handler;
        response = await chosen.fetch(proxied, { parsedBody });
      } catch (error) {
        inflight.delete(controller);
        throw error;
      } finally {
        request.signal.removeEventListener("abort", onDisconnect);
      }
      if (outcome.kind !== "reject" && response.status >= 400) {
        // Refused by the SDK's own later checks (`Mcp-Name`, params).
        await auditLateRefusal(audit, request, caller, parsedBody, response);
      }
      if (response.body === null) {
        inflight.delete(controller);
        return withStreamHeaders(response);
      }
      const done = () => inflight.delete(controller);
      return withStreamHeaders(onBodyCancel(
        trackEnd(response, done),
        () => {
          done();
          controller.abort(new Error("The client closed the response stream."));
        },
      ));
    },
    cancelAll(reason) {
      for (const controller of inflight) controller.abort(new Error(reason));
      inflight.clear();
    },
  };
}

async function auditLateRefusal(
  audit: TransportAudit,
  request: Request,
  caller: CallerIdentity,
  parsedBody: unknown,
  response: Response,
): Promise<void> {
  let code = 0;
  try {
    const body: unknown = await response.clone().json();
    const error = (body as { error?: { code?: unknown } }).error;
    if (typeof error?.code === "number") code = error.code;
  } catch {
    // Not a JSON-RPC error body: the status alone is recorded.
  }
  await audit.writeEvent("protocol_refused", {
    protocol_era: MODERN_ERA,
    transport: "http",
    client_id: caller.clientId,
    check: `http-${response.status}`,
    jsonrpc_code: code,
    method: methodOf(parsedBody),
    mcp_method_header: request.headers.get("mcp-method"),
    mcp_name_header: request.headers.get("mcp-name"),
  });
}

/** Proxies must not hold back an event stream (nginx buffers by default). */
function withStreamHeaders(response: Response): Response {
  if (!(response.headers.get("content-type") ?? "").startsWith("text/event-stream")) {
    return response;
  }
  const headers = new Headers(response.headers);
  headers.set("x-accel-buffering", "no");
  headers.set("cache-control", "no-cache, no-transform");
  return new Response(response.body, { status: response.status, headers });
}

/** Runs `onEnd` once the body has been read to its end. */
function trackEnd(response: Response, onEnd: () => void): Response {
  const body = response.body;
  if (body === null) return response;
  const piped = body.pipeThrough(
    new TransformStream<Uint8Array, Uint8Array>({ flush: () => onEnd() }),
  );
  return new Response(piped, { status: response.status, headers: response.headers });
}

function optionalHeader<K extends string>(key: K, value: string | null): { [P in K]?: string } {
  return (value === null ? {} : { [key]: value }) as { [P in K]?: string };
}

function methodOf(body: unknown): string | null {
  if (typeof body !== "object" || body === null || Array.isArray(body)) return null;
  const method = (body as { method?: unknown }).method;
  return typeof method === "string" ? method : null;
}
