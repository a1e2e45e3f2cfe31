/**
 * `serveHttp`: MCP over Streamable HTTP on `Deno.serve`, with the co-hosted
 * OAuth authorization server, request limits, Host/Origin checks and one MCP
 * session per client conversation.
 *
 * @module
 */
import { type AuthorizationServer, createAuthorizationServer } from "../../auth/mod.ts";
import { createMcpServer, type ServerContext } from "../../server/mod.ts";
import "./_audit_events.ts";
import { jsonError } from "./_responses.ts";
import { boundOrigin, parseListen } from "./address.ts";
import { createHttpHandler, MCP_PATH } from "./handler.ts";
import { createHostCheck } from "./host_check.ts";
import { handleMcp } from "./mcp_route.ts";
import { DEFAULT_SESSION_LIMITS, type SessionLimits, SessionTable } from "./sessions.ts";
import { checkExposure } from "./startup_checks.ts";

/** Options of {@linkcode serveHttp}. */
export interface ServeHttpOptions {
  /** `HOST:PORT` to listen on (`127.0.0.1:8080`, `[::1]:8080`); port 0 picks a free port. */
  readonly listen: string;
  /**
   * The externally visible origin (`[http] base_url` or `HTMCP_BASE_URL`), or
   * null to derive `http(s)://HOST:PORT` from the address bound.
   */
  readonly baseUrl: string | null;
  /** `HTMCP_OAUTH_ADMIN_PIN`, or null when unset (ignored with `[auth] mode = "none"`). */
  readonly adminPin: string | null;
  /** Session table limits (defaults: 256 sessions, 16 per client, 30 min idle). */
  readonly sessionLimits?: SessionLimits;
  /** Where startup warnings go; default stderr. */
  readonly warn?: (line: string) => void;
}

/** A running HTTP server. */
export interface HttpServerHandle {
  /** The origin actually bound, e.g. `http://127.0.0.1:41234` (port 0 resolved). */
  readonly url: string;
  /** The externally visible origin: OAuth issuer; `${baseUrl}/mcp` is the resource. */
  readonly baseUrl: string;
  /** The startup warnings (also sent to `warn`). */
  readonly warnings: readonly string[];
  /** Stops accepting requests, closes every session, waits for the server to finish. Idempotent. */
  shutdown(): Promise<void>;
  /** Settles when the server has stopped. */
  readonly finished: Promise<void>;
}

export type ServeHttpResult =
  | { readonly ok: true; readonly server: HttpServerHandle }
  | { readonly ok: false; readonly message: string };

/**
 * Starts the HTTP server. It does not own `context`: after `shutdown()` the
 * caller closes the context (which kills running commands and writes their
 * outcome records).
 *
 * @param context The shared server context.
 * @param options Where to listen and how the server is seen from outside.
 * @returns The running server, or one sentence saying why it cannot start.
 *
 * @example
 * ```ts
 * const started = await serveHttp(context, { listen: "127.0.0.1:0", baseUrl: null, adminPin });
 * if (!started.ok) throw new Error(started.message);
 * console.error(`MCP at ${started.server.url}/mcp`);
 * await started.server.shutdown();
 * await context.close("test done");
 * ```
 */
export async function serveHttp(
  context: ServerContext,
  options: ServeHttpOptions,
): Promise<ServeHttpResult> {
  const { policy } = context;
  const parsed = parseListen(options.listen);
  if (!parsed.ok) return parsed;
  const address = parsed.address;
  const exposure = checkExposure(policy, address, options.baseUrl);
  if (!exposure.ok) return exposure;

  const tls = policy.http.tlsCert !== null && policy.http.tlsKey !== null;
  let cert: { cert: string; key: string } | null = null;
  if (tls) {
    try {
      cert = {
        cert: await Deno.readTextFile(policy.http.tlsCert as string),
        key: await Deno.readTextFile(policy.http.tlsKey as string),
      };
    } catch (error) {
      return {
        ok: false,
        message: `The TLS certificate or key cannot be read: ${errorText(error)}.`,
      };
    }
  }

  const ready = Promise.withResolvers<
    (request: Request, info: Deno.ServeHandlerInfo<Deno.NetAddr>) => Promise<Response>
  >();
  let closing = false;
  let server: Deno.HttpServer<Deno.NetAddr>;
  try {
    server = Deno.serve({
      hostname: address.hostname,
      port: address.port,
      ...(cert ?? {}),
      onListen: () => {},
      onError: (error) => {
        // The client learns nothing; the operator finds the detail in the log.
        void context.audit.writeEvent("internal_error", {
          call_id: null,
          where: "http",
          message: errorText(error),
        });
        return jsonError(500, "internal_error", "An unexpected server error.");
      },
    }, async (request, info) => {
      if (closing) return jsonError(503, "shutting_down", "The server is shutting down.");
      return await (await ready.promise)(request, info);
    });
  } catch (error) {
    return { ok: false, message: `Cannot listen on "${options.listen}": ${errorText(error)}.` };
  }

  const url = boundOrigin(address, server.addr.port, tls);
  const baseUrl = options.baseUrl ?? url;
  let auth: AuthorizationServer | null = null;
  if (policy.auth.mode !== "none") {
    const created = await createAuthorizationServer({
      policy,
      baseUrl,
      audit: context.audit,
      stateDir: policy.stateDir as string,
      adminPin: options.adminPin,
    });
    if (!created.ok) {
      closing = true;
      await server.shutdown();
      return { ok: false, message: created.message };
    }
    auth = created.auth;
  }

  const sessions = new SessionTable(options.sessionLimits ?? DEFAULT_SESSION_LIMITS);
  const hostCheck = createHostCheck({
    address,
    port: server.addr.port,
    tls,
    baseUrl: options.baseUrl,
    allowedOrigins: policy.http.allowedOrigins,
    allowedHosts: policy.http.allowedHosts,
  });
  const mcpDeps = {
    maxRequestBytes: policy.http.maxRequestBytes,
    audit: context.audit,
    auth,
    localhostBypass: policy.auth.allowLocalhostBypass,
    sessions,
    createServer: (caller: Parameters<typeof createMcpServer>[1]) =>
      createMcpServer(context, caller),
  };
  ready.resolve(createHttpHandler({
    maxRequestBytes: policy.http.maxRequestBytes,
    hostCheck,
    audit: context.audit,
    auth,
    mcp: (request, connection) => handleMcp(mcpDeps, request, connection),
  }));
  sessions.startSweeping();

  const warn = options.warn ?? ((line: string) => console.error(`htmcp: ${line}`));
  for (const line of exposure.warnings) warn(line);

  let stopping: Promise<void> | null = null;
  const handle: HttpServerHandle = {
    url,
    baseUrl,
    warnings: exposure.warnings,
    finished: server.finished,
    shutdown() {
      stopping ??= (async () => {
        closing = true;
        const stopped = server.shutdown();
        // Open SSE streams would hold the graceful shutdown forever: end them.
        await sessions.closeAll();
        await stopped;
      })();
      return stopping;
    },
  };
  return { ok: true, server: Object.freeze(handle) };
}

/** The path of the MCP endpoint under the base URL. */
export { MCP_PATH };

function errorText(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
