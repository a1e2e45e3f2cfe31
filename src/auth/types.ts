/**
 * What the HTTP transport is given for OAuth, whichever mode built it: the
 * co-hosted authorization server (`authorization_server.ts`) or the
 * resource server of `[auth] mode = "external"` (`external_resource_server.ts`).
 * Both implement {@linkcode AuthorizationServer}, so the transport has one
 * way to route OAuth paths and check bearer tokens.
 *
 * @module
 */
import type { Policy } from "../config/types.ts";
import type { AuditSink } from "./audit_sink.ts";
import type { BearerFailureReason } from "./bearer/mod.ts";
import type { Scope } from "./scopes.ts";
import type { FailureLimiter, FailureLimits, RequestInfo } from "./server/mod.ts";
import type { AuthSettingsResolved } from "./settings.ts";

/** Options of {@linkcode createAuthorizationServer}. */
export interface AuthorizationServerOptions {
  /**
   * The loaded policy: `[auth]` (mode, PKCE, token lifetime, the external
   * provider), `[http]` limits, `audit_fail_mode` and the state backend.
   */
  readonly policy: Policy;
  /** The externally visible origin (`[http] base_url`, or derived from the listen address). */
  readonly baseUrl: string;
  /** Where registrations, approvals, refusals and bearer failures are audited (the server's log). */
  readonly audit: AuditSink;
  /**
   * The state directory (`state_dir`): created 0700, it holds the signing
   * secret, the approved clients and the revocations (unused with the
   * PostgreSQL state store, which holds them instead).
   */
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
  /** The token is valid, unexpired, unrevoked and for this resource. */
  readonly ok: true;
  /** The client the token was issued to (`client_id`). */
  readonly clientId: string;
  /** The scopes the token grants; each tool still checks the one it needs. */
  readonly scopes: ReadonlySet<Scope>;
  /** The token's id (`jti`), what a revocation names. */
  readonly jti: string;
  /** Seconds since the epoch (for the SDK's `AuthInfo.expiresAt`). */
  readonly expiresAt: number;
}

/** A failed bearer check: send `response` as is. */
export interface BearerRefused {
  /** The request must not reach `/mcp`. */
  readonly ok: false;
  /** 401 (with `WWW-Authenticate`), 400 for a token in the query, 503 if revocations are unreadable. */
  readonly response: Response;
  /** Why, for the audit log; the client learns only what `response` says. */
  readonly reason: BearerFailureReason;
}

/** The authorization server and resource-side bearer check. */
export interface AuthorizationServer {
  /** The issuer, resource and limits this server was started with. */
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

/** An authorization server ready to serve, or the one sentence saying why it cannot start. */
export type AuthorizationServerResult =
  | { ok: true; auth: AuthorizationServer }
  | { ok: false; message: string };
