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

/** An authorization server ready to serve, or the one sentence saying why it cannot start. */
export type AuthorizationServerResult =
  | { ok: true; auth: AuthorizationServer }
  | { ok: false; message: string };
