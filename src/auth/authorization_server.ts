/**
 * Assembles the co-hosted authorization server and the bearer check for the
 * Streamable HTTP transport. The two halves share only the settings, the
 * signing key and the state directory: `server/` issues, `bearer/` checks.
 *
 * @module
 */
import { ExpiringMap } from "./_expiring_map.ts";
import { bearerChecker, insufficientScopeResponse, verifyAccessToken } from "./bearer/mod.ts";
import { challengeScopes } from "./scopes.ts";
import {
  CodeStore,
  createRouter,
  DEFAULT_FAILURE_LIMITS,
  FailureLimiter,
  MAX_PENDING_CLIENTS,
  MAX_TRANSACTIONS,
  type ServerDeps,
} from "./server/mod.ts";
import { rateLimitedLog } from "./server/operator_log.ts";
import { resolveAuthSettings } from "./settings.ts";
import { openAuthState } from "./state/mod.ts";
import { stateStoreFor } from "../state/mod.ts";
import { createExternalResourceServer } from "./external_resource_server.ts";
import type {
  AuthorizationServer,
  AuthorizationServerOptions,
  AuthorizationServerResult,
} from "./types.ts";

/**
 * Builds the authorization server: validates the base URL and PIN, creates
 * `stateDir` (0700) and the JWT secret if needed. With `[auth] mode =
 * "external"` it builds the resource side only, verifying the provider's
 * tokens; both kinds answer the same {@linkcode AuthorizationServer}.
 *
 * @param options The policy, the externally visible origin, the audit sink,
 *   the state directory and the admin PIN.
 * @returns The server, or a one-sentence reason it cannot start.
 *
 * @example A request without a token is refused with the RFC 9728 challenge
 * ```ts
 * import { AuditLog } from "../audit/mod.ts";
 * import { loadPolicy } from "../config/mod.ts";
 * import { createAuthorizationServer } from "./mod.ts";
 *
 * const dir = await Deno.makeTempDir();
 * await Deno.mkdir(`${dir}/jail`);
 * await Deno.writeTextFile(`${dir}/policy.toml`, 'jail_root = "jail"\nstate_dir = "state"\n');
 * const loaded = await loadPolicy({ policyFile: `${dir}/policy.toml`, env: {} });
 * if (!loaded.ok) throw new Error(loaded.message);
 * const log = await AuditLog.open(loaded.policy.auditLog, "closed", { redact: (text) => text });
 * if (!log.ok) throw new Error(log.reason);
 * const created = await createAuthorizationServer({
 *   policy: loaded.policy,
 *   baseUrl: "http://127.0.0.1:8080",
 *   audit: log.log,
 *   stateDir: `${dir}/state`,
 *   adminPin: "plum-7-harbor",
 * });
 * if (!created.ok) throw new Error(created.message);
 * const refused = await created.auth.verifyBearer(new Request("http://127.0.0.1:8080/mcp"));
 * console.assert(!refused.ok && refused.response.status === 401);
 * const metadata = await created.auth.handle(
 *   new Request(created.auth.protectedResourceMetadataUrl),
 *   { remoteAddr: "127.0.0.1" },
 * );
 * console.assert(metadata?.status === 200);
 * await log.log.close();
 * ```
 */
export async function createAuthorizationServer(
  options: AuthorizationServerOptions,
): Promise<AuthorizationServerResult> {
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
