/**
 * Validates a `GET /authorize` request (OAuth 2.1 §4.1.1, RFC 7636, RFC 8707).
 *
 * Errors about the client or the redirect URI are shown on a page and never
 * redirected (RFC 6749 §4.1.2.1: the server "MUST NOT automatically redirect
 * the user-agent to the invalid redirection URI"), and so is every error of a
 * client the operator has not approved yet (its URI is only self-asserted);
 * every other error is sent back to the verified redirect URI with `state`
 * and `iss`.
 *
 * @module
 */
import { paramsToMap } from "../_http.ts";
import { DEFAULT_SCOPES, parseScopeString, type Scope } from "../scopes.ts";
import { findClient, type ServerDeps } from "./deps.ts";
import { isWellFormedChallenge } from "./pkce.ts";
import type { RegisteredClient } from "./registration.ts";

/** Longest `state` we reflect. */
export const MAX_STATE_LENGTH = 1024;

/** A validated authorization request. */
export interface AuthorizeParams {
  readonly client: RegisteredClient;
  readonly approved: boolean;
  readonly redirectUri: string;
  readonly codeChallenge: string;
  readonly codeChallengeMethod: "S256" | "plain";
  readonly state: string;
  readonly resource: string;
  readonly scopes: ReadonlySet<Scope>;
}

/** Why a request was refused, and where the refusal goes. */
export type AuthorizeError =
  | { readonly to: "page"; readonly error: string; readonly description: string }
  | {
    readonly to: "redirect";
    readonly redirectUri: string;
    readonly state: string | null;
    readonly error: string;
    readonly description: string;
  };

export type AuthorizeCheck =
  | { readonly ok: true; readonly params: AuthorizeParams }
  | { readonly ok: false; readonly refusal: AuthorizeError };

/** Checks the query of an authorization request. */
export async function checkAuthorizeRequest(deps: ServerDeps, url: URL): Promise<AuthorizeCheck> {
  const parsed = paramsToMap(url.searchParams);
  if (!parsed.ok) {
    return page("invalid_request", `The parameter "${parsed.duplicate}" is given more than once.`);
  }
  const q = parsed.params;
  const clientId = q.get("client_id");
  if (clientId === undefined || clientId === "") {
    return page("invalid_request", "The client_id parameter is missing.");
  }
  const known = clientId.length <= 200 ? await findClient(deps, clientId) : null;
  if (known === null) {
    return page("invalid_client", `No registered client has the id "${clip(clientId)}".`);
  }
  const redirectUri = q.get("redirect_uri");
  if (redirectUri === undefined) {
    return page("invalid_request", "The redirect_uri parameter is missing.");
  }
  // Exact string comparison (OAuth 2.1 §2.3.1, MCP: "exact match").
  if (!known.client.redirect_uris.includes(redirectUri)) {
    return page(
      "invalid_request",
      `The redirect URI "${clip(redirectUri)}" is not registered for this client.`,
    );
  }

  const rawState = q.get("state");
  const state = rawState !== undefined && rawState !== "" && rawState.length <= MAX_STATE_LENGTH
    ? rawState
    : null;
  // A client only registered, not yet approved by the operator, is anyone's
  // registration: its redirect URI is not one this server trusts, so its
  // errors are shown here rather than sent there, or /authorize would be an
  // open redirector to any address (RFC 9700 §4.11.2).
  const back = (error: string, description: string): AuthorizeCheck =>
    known.approved
      ? { ok: false, refusal: { to: "redirect", redirectUri, state, error, description } }
      : page(error, description);

  const responseType = q.get("response_type");
  if (responseType === undefined) return back("invalid_request", "response_type is missing.");
  if (responseType !== "code") {
    return back("unsupported_response_type", "Only response_type=code is supported.");
  }
  if (state === null) {
    return back(
      "invalid_request",
      `state is required (1 to ${MAX_STATE_LENGTH} characters) to protect the client against CSRF.`,
    );
  }
  const challenge = q.get("code_challenge");
  if (challenge === undefined) return back("invalid_request", "code_challenge is required (PKCE).");
  // RFC 7636 §4.3: an absent method means "plain".
  const method = q.get("code_challenge_method") ?? "plain";
  if (method !== "S256" && !(method === "plain" && deps.settings.allowPlainPkce)) {
    return back("invalid_request", "code_challenge_method must be S256.");
  }
  if (!isWellFormedChallenge(challenge, method)) {
    return back("invalid_request", "code_challenge is malformed.");
  }
  // RFC 8707 §2 and the MCP spec: the client names the resource it wants a
  // token for; only our own canonical /mcp resource can be granted.
  const resource = q.get("resource");
  if (resource === undefined) {
    return back(
      "invalid_target",
      `The resource parameter is required; use "${deps.settings.resource}".`,
    );
  }
  if (resource !== deps.settings.resource) {
    return back(
      "invalid_target",
      `This server only issues tokens for "${deps.settings.resource}".`,
    );
  }
  const scopes = resolveScopes(q.get("scope"), known.client);
  if (!scopes.ok) return back("invalid_scope", scopes.description);

  return {
    ok: true,
    params: {
      client: known.client,
      approved: known.approved,
      redirectUri,
      codeChallenge: challenge,
      codeChallengeMethod: method,
      state,
      resource,
      scopes: scopes.scopes,
    },
  };
}

/**
 * The requested scopes, limited to what the client registered for. With no
 * `scope` parameter the client gets what it registered for, or the default
 * scopes (the command scopes) when it registered none; the operator sees the
 * list before approving.
 */
function resolveScopes(
  requested: string | undefined,
  client: RegisteredClient,
): { ok: true; scopes: ReadonlySet<Scope> } | { ok: false; description: string } {
  const registered = client.scope === "" ? null : parseScopeString(client.scope);
  const allowed = registered !== null && registered.ok
    ? registered.scopes
    : new Set(DEFAULT_SCOPES);
  if (requested === undefined || requested.trim() === "") return { ok: true, scopes: allowed };
  const parsed = parseScopeString(requested);
  if (!parsed.ok) {
    return { ok: false, description: `The scope "${clip(parsed.unknown)}" is not offered.` };
  }
  for (const scope of parsed.scopes) {
    if (!allowed.has(scope)) {
      return { ok: false, description: `The client did not register for the scope "${scope}".` };
    }
  }
  return { ok: true, scopes: parsed.scopes };
}

function page(error: string, description: string): AuthorizeCheck {
  return { ok: false, refusal: { to: "page", error, description } };
}

function clip(text: string): string {
  return text.length > 80 ? `${text.slice(0, 80)}...` : text;
}
