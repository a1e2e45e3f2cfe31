/**
 * `serveHttp`: MCP over Streamable HTTP on the bounded listener
 * (`listener.ts`), with the co-hosted OAuth authorization server, request
 * limits, Host/Origin checks and one MCP session per client conversation.
 *
 * @module
 */
import { type AuthorizationServer, createAuthorizationServer } from "../../auth/mod.ts";
import type { CallRegistry } from "../../server/mod.ts";
import { createMcpServer } from "../../server/mcp_server.ts";
import type { ServerContext } from "../../context/mod.ts";
import "./_audit_events.ts";
import { jsonError } from "./_responses.ts";
import { boundOrigin, parseListen } from "./address.ts";
import { createHttpHandler, MCP_PATH } from "./handler.ts";
import { operatorLog, withRequestLog } from "../../telemetry/mod.ts";
import { createHostCheck } from "./host_check.ts";
import { handleMcp } from "./mcp_route.ts";
import { createModernRoute } from "./modern_route.ts";
import { createModernEra } from "../../protocol/mod.ts";
import { serverIdentity } from "../../server/identity.ts";
import { serverInstructions } from "../../server/instructions.ts";
import { unreadBound } from "../backlog.ts";
import { ByteBudget } from "../../streams/mod.ts";
import {
  DEFAULT_REFUSAL_LIMITS,
  ledgerSummaries,
  RefusalLedger,
  type RefusalLedgerLimits,
  withRefusalLedger,
} from "./refusal_ledger.ts";
import { describeFdBudget, type FdBudget, fdBudget, readFdLimit } from "./fd_budget.ts";
import {
  type ConnectionLimits,
  type ConnectionRequestInfo,
  type ListenerStats,
  listenHttp,
} from "./listener.ts";
import {
  CLOSE_GRACE_MS,
  DEFAULT_SESSION_LIMITS,
  type SessionLimits,
  SessionTable,
} from "./sessions.ts";
import { checkExposure } from "./startup_checks.ts";
import { startLinks } from "../../links/mod.ts";
import { registerLinkTools } from "../../server/register_links.ts";
import { createHealthRoute, createReadiness, jwksProbeFor } from "../../health/mod.ts";
import { createApprovalPage } from "../../approvals/page/mod.ts";
import { DEFAULT_FAILURE_LIMITS, FailureLimiter } from "../../auth/server/mod.ts";
import { stateStoreFor } from "../../state/mod.ts";

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
  /** Interval of `: keepalive` comments on event streams (tests); default 15 s. */
  readonly sseKeepAliveMs?: number;
  /** Refusal-record aggregation (tests); default one minute, 64 sources and reasons. */
  readonly refusalLimits?: RefusalLedgerLimits;
  /** Connection limits (tests); default from the policy and the descriptor limit. */
  readonly connectionLimits?: ConnectionLimits;
}

/** A running HTTP server. */
export interface HttpServerHandle {
  /** The origin actually bound, e.g. `http://127.0.0.1:41234` (port 0 resolved). */
  readonly url: string;
  /** The externally visible origin: OAuth issuer; `${baseUrl}/mcp` is the resource. */
  readonly baseUrl: string;
  /** The startup warnings (also sent to `warn`). */
  readonly warnings: readonly string[];
  /**
   * Stops accepting, cancels every session's calls and waits (at most the
   * grace period) for their `CANCELLED` answers, closes every session and
   * connection. Idempotent.
   */
  shutdown(): Promise<void>;
  /** The descriptor limit and the connection limit derived from it. */
  readonly fdBudget: FdBudget;
  /** The connection limits in force. */
  readonly limits: ConnectionLimits;
  /** Live connection counters. */
  readonly stats: Readonly<ListenerStats>;
  /** Settles when the server has stopped. */
  readonly finished: Promise<void>;
}

/**
 * What {@linkcode serveHttp} returns: the running server, or one sentence
 * saying why it did not start (a bad address, an exposure the policy does not
 * allow, an unreadable TLS key, a port in use). A refusal to start is a value,
 * not a throw, so the CLI prints it and exits 1.
 */
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
 * import { loadPolicy } from "../../config/mod.ts";
 * import { createServerContext } from "../../server/mod.ts";
 * import { MCP_PATH, serveHttp } from "./server.ts";
 *
 * const loaded = await loadPolicy({ policyFile: "policy.toml", env: Deno.env.toObject() });
 * if (!loaded.ok) throw new Error(loaded.message);
 * const built = await createServerContext(loaded.policy);
 * if (!built.ok) throw new Error(built.message);
 * const { context } = built;
 * const started = await serveHttp(context, { listen: "127.0.0.1:0", baseUrl: null, adminPin: null });
 * if (!started.ok) throw new Error(started.message);
 * console.error(`MCP at ${started.server.url}${MCP_PATH}`);
 * await started.server.shutdown();
 * await context.close("example done");
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

  const warnLine = options.warn ??
    ((line: string) => operatorLog().write("warn", "http_warning", line.replace(/^warning: /, "")));
  const budget = fdBudget(
    readFdLimit(),
    policy.http.maxConnections,
    policy.limits.maxConcurrent,
  );
  const limits: ConnectionLimits = options.connectionLimits ?? {
    maxConnections: budget.maxConnections,
    headerTimeoutMs: policy.http.headerTimeoutMs,
    idleTimeoutMs: policy.http.idleTimeoutMs,
    maxUnreadBytes: unreadBound(policy.limits.maxOutputBytes),
  };
  const ready = Promise.withResolvers<
    (request: Request, info: ConnectionRequestInfo) => Promise<Response>
  >();
  let closing = false;
  const listened = listenHttp({
    hostname: address.hostname,
    port: address.port,
    tls: cert,
    limits,
    onError: (error) => {
      // The client learns nothing; the operator finds the detail in the log.
      void context.audit.writeEvent("internal_error", {
        call_id: null,
        where: "http",
        message: errorText(error),
      });
      return jsonError(500, "internal_error", "An unexpected server error.");
    },
    onAcceptError: (message, count, total) => {
      warnLine(
        `accepting a connection failed ${count} time(s) since the last report (${total} in all): ${message}; backing off.`,
      );
      void context.audit.writeEvent("http_accept_failed", { message, count, total });
    },
    handler: async (request, info) => {
      if (closing) return jsonError(503, "shutting_down", "The server is shutting down.");
      return await (await ready.promise)(request, info);
    },
  });
  if (!listened.ok) {
    return { ok: false, message: `Cannot listen on "${options.listen}": ${listened.message}.` };
  }
  const listener = listened.listener;

  // Refusals before authentication go through the ledger (bounded audit
  // cost); everything else is written as it comes.
  const ledger = new RefusalLedger(
    ledgerSummaries(context.audit),
    options.refusalLimits ?? DEFAULT_REFUSAL_LIMITS,
  );
  const audit = withRefusalLedger(context.audit, ledger);
  const url = boundOrigin(address, listener.addr.port, tls);
  const baseUrl = options.baseUrl ?? url;
  // One PIN, one budget of guesses: the OAuth page and the approvals page share it.
  const pinLimiter = new FailureLimiter(DEFAULT_FAILURE_LIMITS, Date.now);
  let auth: AuthorizationServer | null = null;
  if (policy.auth.mode !== "none") {
    const created = await createAuthorizationServer({
      policy,
      baseUrl,
      audit,
      stateDir: policy.stateDir as string,
      adminPin: options.adminPin,
      pinLimiter,
    });
    if (!created.ok) {
      closing = true;
      listener.stopAccepting();
      listener.closeConnections();
      return { ok: false, message: created.message };
    }
    auth = created.auth;
  }
  const approvalPage = createApprovalPage({
    adminPin: options.adminPin,
    store: stateStoreFor(policy),
    ownOrigin: new URL(baseUrl).origin,
    audit,
    pinLimiter,
    maxBodyBytes: policy.http.maxRegistrationBytes,
  });
  if (!approvalPage.ok) {
    closing = true;
    listener.stopAccepting();
    listener.closeConnections();
    return { ok: false, message: approvalPage.message };
  }

  // Download links exist over HTTP only: the URL is this server's.
  const links = await startLinks(policy, audit);
  // One server definition for both eras: the 2026 one reaches the same tools.
  const buildServer = (caller: Parameters<typeof createMcpServer>[1], calls: CallRegistry) => {
    const server = createMcpServer(context, caller, calls);
    if (links !== null) {
      registerLinkTools(server, context, caller, { store: links.store, baseUrl });
    }
    return server;
  };
  const modernEra = await createModernEra({
    context,
    info: serverIdentity(),
    instructions: serverInstructions(context),
    build: buildServer,
  });
  if (!modernEra.ok) {
    await links?.stop();
    closing = true;
    listener.stopAccepting();
    listener.closeConnections();
    return { ok: false, message: modernEra.message };
  }
  const sseKeepAliveMs = options.sseKeepAliveMs ?? SSE_KEEP_ALIVE_MS;
  const modern = createModernRoute(modernEra.era, audit, sseKeepAliveMs);

  const sessions = new SessionTable(options.sessionLimits ?? DEFAULT_SESSION_LIMITS);
  const hostCheck = createHostCheck({
    address,
    port: listener.addr.port,
    tls,
    baseUrl: options.baseUrl,
    allowedOrigins: policy.http.allowedOrigins,
    allowedHosts: policy.http.allowedHosts,
  });
  const mcpDeps = {
    maxRequestBytes: policy.http.maxRequestBytes,
    bodyBudget: new ByteBudget(bodyBudgetBytes(policy.http.maxRequestBytes)),
    sseKeepAliveMs,
    audit,
    auth,
    localhostBypass: policy.auth.allowLocalhostBypass,
    sessions,
    modern,
    createServer: buildServer,
  };
  ready.resolve(withRequestLog(
    createHttpHandler({
      maxRequestBytes: policy.http.maxRequestBytes,
      hostCheck,
      audit,
      auth,
      mcp: (request, connection) => handleMcp(mcpDeps, request, connection),
      health: createHealthRoute(createReadiness(context, { jwks: jwksProbeFor(policy) })),
      download: links === null ? null : links.route,
      approvals: approvalPage.route,
    }),
    (info) => info.remoteAddr.hostname,
  ));
  sessions.startSweeping();
  ledger.start();

  const warnings = budget.warning === null
    ? exposure.warnings
    : [...exposure.warnings, budget.warning];
  for (const line of warnings) warnLine(line);

  let stopping: Promise<void> | null = null;
  const handle: HttpServerHandle = {
    url,
    baseUrl,
    warnings,
    finished: listener.finished,
    fdBudget: budget,
    limits,
    stats: listener.stats,
    shutdown() {
      stopping ??= (async () => {
        closing = true;
        listener.stopAccepting();
        links?.stop();
        // In-flight calls are answered CANCELLED on their streams before
        // the streams end; open SSE streams would otherwise hold the
        // shutdown forever.
        modern.cancelAll("The server is shutting down.");
        await sessions.closeAll("The server is shutting down.", CLOSE_GRACE_MS);
        await listener.answersSent(CLOSE_GRACE_MS);
        listener.closeConnections();
        await listener.finished;
        // The counts of the last interval are written before the log closes.
        await ledger.close();
      })();
      return stopping;
    },
  };
  return { ok: true, server: Object.freeze(handle) };
}

/** The path of the MCP endpoint under the base URL. */
export { MCP_PATH };
export { describeFdBudget };

/** `: keepalive` comments on event streams: well inside the usual 30-60 s proxy read timeouts. */
const SSE_KEEP_ALIVE_MS = 15_000;

/**
 * Bytes of request bodies held at once, across all requests: four bodies at
 * the per-request limit (at least 16 MiB); none when the limit is off.
 */
function bodyBudgetBytes(maxRequestBytes: number): number {
  return maxRequestBytes === 0 ? 0 : Math.max(16 * 1024 * 1024, 4 * maxRequestBytes);
}

function errorText(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
