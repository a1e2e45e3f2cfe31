/**
 * `[auth] mode = "external"`: htmcp as a pure OAuth resource server. An
 * external identity provider (Keycloak, Auth0, Entra ID, Okta, ...) signs
 * users in and issues the tokens; we serve only the RFC 9728 metadata that
 * names it, and check its tokens. None of the built-in issuing endpoints
 * (`/authorize`, `/token`, `/register`, RFC 8414 metadata) are mounted, so a
 * client can never be led to a second, weaker way in.
 *
 * @module
 */
import { CORS } from "./_http.ts";
import type {
  AuthorizationServer,
  AuthorizationServerOptions,
  AuthorizationServerResult,
} from "./types.ts";
import { bearerChecker, insufficientScopeResponse } from "./bearer/mod.ts";
import { challengeScopes } from "./scopes.ts";
import { createExternalVerifier } from "./bearer/verify_external.ts";
import { PROTECTED_RESOURCE_METADATA_PATHS, protectedResourceMetadata } from "./server/metadata.ts";
import { resolveAuthSettings } from "./settings.ts";

/** A client secret is short; a larger file is a mistake (a key, a log), not a secret. */
const MAX_SECRET_BYTES = 4096;

/**
 * Builds the resource server of external mode.
 *
 * @returns The server, or a one-sentence reason it cannot start.
 */
export async function createExternalResourceServer(
  options: AuthorizationServerOptions,
): Promise<AuthorizationServerResult> {
  const external = options.policy.auth.external;
  if (external === null) {
    return { ok: false, message: 'auth.mode = "external" needs auth.issuer.' };
  }
  const resolved = resolveAuthSettings(options.policy, options.baseUrl, null);
  if (!resolved.ok) return resolved;
  const settings = resolved.settings;
  let secret: string | null = null;
  if (external.introspection !== null) {
    const read = await readSecret(external.introspection.secretFile);
    if (!read.ok) return read;
    secret = read.secret;
  }
  const now = options.now ?? Date.now;
  const verifier = createExternalVerifier({
    settings: external,
    resource: settings.resource,
    introspectionSecret: secret,
    now,
  });
  const audit = options.audit;
  const metadataUrl = settings.protectedResourceMetadataUrl;
  const prDoc = JSON.stringify(protectedResourceMetadata(settings, external.issuer));

  const check = bearerChecker(
    audit,
    metadataUrl,
    (token) => verifier.verify(token),
    challengeScopes(options.policy.auditExposeToModel === true),
  );

  const auth: AuthorizationServer = {
    settings,
    protectedResourceMetadataUrl: metadataUrl,
    handle(request) {
      const path = new URL(request.url).pathname;
      if (!PROTECTED_RESOURCE_METADATA_PATHS.has(path)) return Promise.resolve(null);
      if (request.method === "OPTIONS") {
        return Promise.resolve(new Response(null, { status: 204, headers: CORS }));
      }
      if (request.method !== "GET") {
        return Promise.resolve(
          new Response(null, { status: 405, headers: { allow: "GET, OPTIONS" } }),
        );
      }
      return Promise.resolve(
        new Response(prDoc, {
          status: 200,
          headers: { "content-type": "application/json", "cache-control": "max-age=300", ...CORS },
        }),
      );
    },
    verifyBearer: check,
    insufficientScope: (scope) => insufficientScopeResponse(scope, metadataUrl),
  };
  return { ok: true, auth };
}

async function readSecret(
  path: string,
): Promise<{ ok: true; secret: string } | { ok: false; message: string }> {
  let bytes: Uint8Array;
  try {
    bytes = await Deno.readFile(path);
  } catch (error) {
    const why = error instanceof Error ? error.message : String(error);
    return { ok: false, message: `Cannot read auth.introspection_secret_file "${path}": ${why}.` };
  }
  const secret = new TextDecoder().decode(bytes).trim();
  if (bytes.length > MAX_SECRET_BYTES || secret === "" || /[\r\n\0]/.test(secret)) {
    return {
      ok: false,
      message:
        `auth.introspection_secret_file "${path}" must hold the client secret alone, on one line.`,
    };
  }
  return { ok: true, secret };
}
