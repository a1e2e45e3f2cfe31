/**
 * Routes the authorization server's paths. Anything else is not ours: the
 * caller gets null and routes it elsewhere.
 *
 * @module
 */
import { CORS, jsonResponse } from "../_http.ts";
import { handleAuthorizeGet, handleAuthorizePost } from "./authorize_endpoint.ts";
import type { RequestInfo, ServerDeps } from "./deps.ts";
import {
  AUTHORIZATION_SERVER_METADATA_PATHS,
  authorizationServerMetadata,
  PROTECTED_RESOURCE_METADATA_PATHS,
  protectedResourceMetadata,
} from "./metadata.ts";
import { handleRegister } from "./register_endpoint.ts";
import { handleToken } from "./token_endpoint.ts";

type Handler = (deps: ServerDeps, request: Request, info: RequestInfo) => Promise<Response>;

interface Route {
  readonly methods: ReadonlyMap<string, Handler>;
  /** Cross-origin callable (no ambient credentials): answers preflight and adds CORS. */
  readonly cors: boolean;
}

/**
 * Builds the router for one server: the metadata documents (GET), `/register`
 * and `/token` (POST, and CORS preflight: they carry no ambient credentials),
 * and `/authorize` (the approval page and its form post, no CORS). A known
 * path with another method gets 405 with `Allow`.
 *
 * @param deps The issuing side's shared state.
 * @returns A handler answering the OAuth paths, and null for any other path
 *   (the caller routes it elsewhere).
 *
 * @example The metadata is served; `/mcp` is not an OAuth path
 * ```ts
 * import { AuditLog } from "../../audit/mod.ts";
 * import { openAuthState } from "../state/mod.ts";
 * import { CodeStore, createRouter, DEFAULT_FAILURE_LIMITS, ExpiringMap, FailureLimiter } from "./mod.ts";
 *
 * const dir = await Deno.makeTempDir();
 * const log = await AuditLog.open(`${dir}/audit.jsonl`, "closed", { redact: (text) => text });
 * const state = await openAuthState(dir);
 * if (!log.ok || !state.ok) throw new Error("the audit log or the OAuth state did not open");
 * const issuer = "http://127.0.0.1:8080";
 * const route = createRouter({
 *   settings: {
 *     issuer,
 *     resource: `${issuer}/mcp`,
 *     protectedResourceMetadataUrl: `${issuer}/.well-known/oauth-protected-resource/mcp`,
 *     accessTokenTtlSeconds: 3600,
 *     allowPlainPkce: false,
 *     maxBodyBytes: 16_384,
 *     adminPin: "plum-7-harbor",
 *     auditFailClosed: true,
 *     clientIdMetadataAllow: [],
 *   },
 *   key: state.state.key,
 *   registry: state.state.registry,
 *   audit: log.log,
 *   now: Date.now,
 *   pending: new ExpiringMap(100, "refuse", Date.now),
 *   transactions: new ExpiringMap(256, "refuse", Date.now),
 *   codes: new CodeStore(Date.now),
 *   pinLimiter: new FailureLimiter(DEFAULT_FAILURE_LIMITS, Date.now),
 *   operatorLog: (line) => console.error(line),
 * });
 * const info = { remoteAddr: "127.0.0.1" };
 * const metadata = await route(new Request(`${issuer}/.well-known/oauth-authorization-server`), info);
 * console.assert(metadata?.status === 200);
 * console.assert(await route(new Request(`${issuer}/mcp`), info) === null);
 * await log.log.close();
 * ```
 */
export function createRouter(
  deps: ServerDeps,
): (request: Request, info: RequestInfo) => Promise<Response | null> {
  const asDoc = JSON.stringify(authorizationServerMetadata(deps.settings));
  const prDoc = JSON.stringify(protectedResourceMetadata(deps.settings));
  const doc = (text: string): Handler => () =>
    Promise.resolve(
      new Response(text, {
        status: 200,
        headers: { "content-type": "application/json", "cache-control": "max-age=300", ...CORS },
      }),
    );
  const routes = new Map<string, Route>();
  for (const path of AUTHORIZATION_SERVER_METADATA_PATHS) {
    routes.set(path, { methods: new Map([["GET", doc(asDoc)]]), cors: true });
  }
  for (const path of PROTECTED_RESOURCE_METADATA_PATHS) {
    routes.set(path, { methods: new Map([["GET", doc(prDoc)]]), cors: true });
  }
  routes.set("/register", { methods: new Map([["POST", handleRegister]]), cors: true });
  routes.set("/token", { methods: new Map([["POST", handleToken]]), cors: true });
  routes.set("/authorize", {
    methods: new Map<string, Handler>([
      ["GET", (d, r) => handleAuthorizeGet(d, r)],
      ["POST", handleAuthorizePost],
    ]),
    cors: false,
  });

  return async (request, info) => {
    const path = new URL(request.url).pathname;
    const route = routes.get(path);
    if (route === undefined) return null;
    const handler = route.methods.get(request.method);
    if (handler !== undefined) return await handler(deps, request, info);
    if (request.method === "OPTIONS" && route.cors) {
      return new Response(null, { status: 204, headers: CORS });
    }
    const allow = [...route.methods.keys(), ...(route.cors ? ["OPTIONS"] : [])].join(", ");
    return jsonResponse(405, {
      error: "invalid_request",
      error_description: `${request.method} is not allowed on ${path}.`,
    }, { allow });
  };
}
