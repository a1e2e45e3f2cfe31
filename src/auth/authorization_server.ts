/**
 * Assembles the co-hosted authorization server and the bearer check for the
 * Streamable HTTP transport. The two halves share only the settings, the
 * signing key and the state directory: `server/` issues, `bearer/` checks.
 *
 * @module
 */
import type { Policy } from "../config/types.ts";
import { ExpiringMap } from "./_expiring_map.ts";
import type { AuditSink } from "./audit_sink.ts";
import { bearerChecker, insufficientScopeResponse, verifyAccessToken } from "./bearer/mod.ts";
import { challengeScopes } from "./scopes.ts";
import type { BearerFailureReason } from "./bearer/mod.ts";
import type { Scope } from "./scopes.ts";
import {
  CodeStore,
  createRouter,
  DEFAULT_FAILURE_LIMITS,
  FailureLimiter,
  type FailureLimits,
  MAX_PENDING_CLIENTS,
  MAX_TRANSACTIONS,
  type RequestInfo,
  type ServerDeps,
} from "./server/mod.ts";
import { rateLimitedLog } from "./server/operator_log.ts";
import { type AuthSettingsResolved, resolveAuthSettings } from "./settings.ts";
import { openAuthState } from "./state/mod.ts";
import { stateStoreFor } from "../state/mod.ts";
import { createExternalResourceServer } from "./external_resource_server.ts";

/** Options of {@linkcode createAuthorizationServer}. */
export interface AuthorizationServerOptions {
  readonly policy: Policy;
  /** The externally visible origin (`[http] base_url`, or derived from the listen address). */
  readonly baseUrl: string;
  readonly audit: AuditSink;
  readonly stateDir: string;
  /** `HTMCP_OAUTH_ADMIN_PIN`, or null when unset. */
  readonly adminPin: string | null;
  /** Clock in milliseconds (tests). */
  readonly now?: () => number;
  /** Failed-PIN throttling (tests); defaults to 5 per address and 50 overall per 15 minutes. */
  readonly pinLimits?: FailureLimits;
  /** A failed-PIN limiter shared with another page of the same PIN (the approvals page). */
  readonly pinLimiter?: FailureLimiter;
  /** Where lines for the operator go (refused approvals); default stderr. */
  readonly operatorLog?: (line: string) => void;
}

/** A successful bearer check. */
export interface BearerOk {
  readonly ok: true;
  readonly clientId: string;
  readonly scopes: ReadonlySet<Scope>;
  readonly jti: string;
  /** Seconds since the epoch (for the SDK's `AuthInfo.expiresAt`). */
  readonly expiresAt: number;
}

/** A failed bearer check: send `response` as is. */
export interface BearerRefused {
  readonly ok: false;
  /** 401 (with `WWW-Authenticate`), 400 for a token in the query, 503 if revocations are unreadable. */
  readonly response: Response;
  readonly reason: BearerFailureReason;
}

/** The authorization server and resource-side bearer check. */
export interface AuthorizationServer {
  readonly settings: AuthSettingsResolved;
  /**
   * Handles the OAuth and metadata routes; null when the path is not one of
   * them. Reads bodies itself under `[http] max_registration_bytes`.
   */
  handle(request: Request, info: RequestInfo): Promise<Response | null>;
  /**
   * Verifies the `Authorization` header for the `/mcp` resource. Never reads
   * the body. Invalid tokens (not missing ones) are audited as `bearer_invalid`.
   */
  verifyBearer(request: Request, info?: RequestInfo): Promise<BearerOk | BearerRefused>;
  /** 403 `insufficient_scope` naming `scope` in `WWW-Authenticate`. */
  insufficientScope(scope: Scope): Response;
  /** The path-based RFC 9728 metadata URL. */
  readonly protectedResourceMetadataUrl: string;
}

/**
 * Builds the authorization server: validates the base URL and PIN, creates
 * `stateDir` (0700) and the JWT secret if needed.
 *
 * @returns The server, or a one-sentence reason it cannot start.
 */
export async function createAuthorizationServer(
  options: AuthorizationServerOptions,
): Promise<{ ok: true; auth: AuthorizationServer } | { ok: false; message: string }> {
  // An external provider issues the tokens: none of our issuing endpoints or
  // state exist, only the resource side.
  if (options.policy.auth.mode === "external") return await createExternalResourceServer(options);
  // A fleet keeps its OAuth state (secret, clients, revocations) in the
  // shared PostgreSQL store, so every replica verifies every token.
  const shared = options.policy.state?.backend === "postgres"
    ? stateStoreFor(options.policy)
    : null;
  // A caller may pass `policy.stateDir` unchecked; without a state directory
  // there is nowhere safe for the secret, so refuse with the key to set.
  if (shared === null && (typeof options.stateDir !== "string" || options.stateDir === "")) {
    return {
      ok: false,
      message: 'OAuth needs a state directory: set "state_dir" in the policy or HTMCP_STATE_DIR.',
    };
  }
  const resolved = resolveAuthSettings(options.policy, options.baseUrl, options.adminPin);
  if (!resolved.ok) return resolved;
  const settings = resolved.settings;
  const audit = options.audit;
  const opened = await openAuthState(
    shared ?? options.stateDir,
    (clientId) => audit.writeEvent("client_revocation_applied", { client_id: clientId }),
  );
  if (!opened.ok) return opened;
  const { key, registry, secretCreated } = opened.state;
  const now = options.now ?? Date.now;
  if (secretCreated) {
    await audit.writeEvent("oauth_secret_created", {
      state_dir: shared === null ? options.stateDir : "(state store)",
    });
  }
  const deps: ServerDeps = {
    settings,
    key,
    registry,
    audit,
    now,
    pending: new ExpiringMap(MAX_PENDING_CLIENTS, "refuse", now),
    transactions: new ExpiringMap(MAX_TRANSACTIONS, "refuse", now),
    codes: new CodeStore(now),
    pinLimiter: options.pinLimiter ??
      new FailureLimiter(options.pinLimits ?? DEFAULT_FAILURE_LIMITS, now),
    operatorLog: rateLimitedLog(options.operatorLog ?? ((line) => console.error(line)), now),
  };
  const route = createRouter(deps);
  const metadataUrl = settings.protectedResourceMetadataUrl;

  const check = bearerChecker(audit, metadataUrl, (token: string) =>
    verifyAccessToken(token, {
      key,
      issuer: settings.issuer,
      resource: settings.resource,
      registry,
      now,
    }), challengeScopes(options.policy.auditExposeToModel === true));

  const auth: AuthorizationServer = {
    settings,
    protectedResourceMetadataUrl: metadataUrl,
    handle: (request, info) => route(request, info),
    verifyBearer: check,
    insufficientScope: (scope) => insufficientScopeResponse(scope, metadataUrl),
  };
  return { ok: true, auth };
}
