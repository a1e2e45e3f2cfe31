/**
 * RFC 7591 dynamic client registration, public clients only.
 *
 * Anyone may register, so registration grants nothing: the new client waits
 * in memory (bounded count, TTL) until the operator approves it with the PIN,
 * and only then is it written to `state_dir`. Every stored field is bounded;
 * fields we do not use are ignored (RFC 7591 §2: "The authorization server
 * MUST ignore any client metadata sent by the client that it does not
 * understand"), never stored or echoed.
 *
 * @module
 */
import { isScope, SCOPES } from "../scopes.ts";
import { checkRedirectUri } from "./redirect_uri.ts";

/**
 * A registered (not yet necessarily approved) public client. The fields keep
 * their RFC 7591 names, as they are stored and answered.
 */
export interface RegisteredClient {
  /** `htmcp-` and 128 random bits for a registration; the document's URL for a metadata client. */
  readonly client_id: string;
  /** The name shown on the approval page (trimmed, no control or invisible characters), or null. */
  readonly client_name: string | null;
  /** The exact redirect URIs an authorize request may name (1 to 8, each checked). */
  readonly redirect_uris: readonly string[];
  /** The scopes registered for, space-separated in canonical order; "" for none named. */
  readonly scope: string;
  /** Seconds since the epoch. */
  readonly client_id_issued_at: number;
}

/** Bounds on what a registration may carry: fields, name, redirect URIs, scope and list lengths. */
export const REGISTRATION_LIMITS: Readonly<{
  /** Most top-level fields in the registration body. */
  maxFields: number;
  /** Longest `client_name`, in characters. */
  maxClientNameLength: number;
  /** Most `redirect_uris`. */
  maxRedirectUris: number;
  /** Longest `scope` string. */
  maxScopeLength: number;
  /** Most entries in `grant_types` or `response_types`. */
  maxListEntries: number;
  /** Longest entry of those lists, and of `token_endpoint_auth_method`. */
  maxListEntryLength: number;
}> = Object.freeze({
  maxFields: 64,
  maxClientNameLength: 100,
  maxRedirectUris: 8,
  maxScopeLength: 200,
  maxListEntries: 8,
  maxListEntryLength: 64,
});

export type RegistrationCheck =
  | {
    readonly ok: true;
    readonly metadata: Omit<RegisteredClient, "client_id" | "client_id_issued_at">;
  }
  | {
    readonly ok: false;
    readonly error: "invalid_redirect_uri" | "invalid_client_metadata";
    readonly description: string;
  };

/**
 * Unicode controls, format characters (bidi overrides, zero-width) and
 * separators other than space: they let a name render as something else on
 * the approval page.
 */
const UNSAFE_NAME_CHARS = /[\p{Cc}\p{Cf}\p{Zl}\p{Zp}\p{Co}\p{Cn}]/u;

/**
 * Validates parsed registration JSON.
 *
 * @param body The parsed JSON request body.
 * @returns The metadata we keep, or the RFC 7591 §3.2.2 error.
 */
export function checkRegistration(body: unknown): RegistrationCheck {
  const L = REGISTRATION_LIMITS;
  if (typeof body !== "object" || body === null || Array.isArray(body)) {
    return bad("invalid_client_metadata", "The registration body must be a JSON object.");
  }
  const fields = body as Record<string, unknown>;
  if (Object.keys(fields).length > L.maxFields) {
    return bad("invalid_client_metadata", `The registration has more than ${L.maxFields} fields.`);
  }
  const uris = Object.hasOwn(fields, "redirect_uris") ? fields.redirect_uris : undefined;
  if (!Array.isArray(uris) || uris.length === 0) {
    return bad("invalid_redirect_uri", "redirect_uris must be a non-empty array.");
  }
  if (uris.length > L.maxRedirectUris) {
    return bad("invalid_redirect_uri", `redirect_uris has more than ${L.maxRedirectUris} entries.`);
  }
  const redirectUris: string[] = [];
  for (const uri of uris) {
    if (typeof uri !== "string") {
      return bad("invalid_redirect_uri", "Each redirect URI must be a string.");
    }
    const check = checkRedirectUri(uri);
    if (!check.ok) {
      return bad("invalid_redirect_uri", `The redirect URI "${clip(uri)}" ${check.reason}.`);
    }
    redirectUris.push(uri);
  }

  let clientName: string | null = null;
  const name = Object.hasOwn(fields, "client_name") ? fields.client_name : undefined;
  if (name !== undefined && name !== null) {
    if (typeof name !== "string") {
      return bad("invalid_client_metadata", "client_name must be a string.");
    }
    if ([...name].length > L.maxClientNameLength) {
      return bad(
        "invalid_client_metadata",
        `client_name is longer than ${L.maxClientNameLength} characters.`,
      );
    }
    if (UNSAFE_NAME_CHARS.test(name)) {
      return bad(
        "invalid_client_metadata",
        "client_name contains control or invisible characters.",
      );
    }
    if (name.trim() !== "") clientName = name.trim();
  }

  let scope = "";
  const rawScope = Object.hasOwn(fields, "scope") ? fields.scope : undefined;
  if (rawScope !== undefined && rawScope !== null) {
    if (typeof rawScope !== "string" || rawScope.length > L.maxScopeLength) {
      return bad(
        "invalid_client_metadata",
        `scope must be a string of at most ${L.maxScopeLength} characters.`,
      );
    }
    const words = rawScope.split(" ").filter((w) => w !== "");
    const unknown = words.find((w) => !isScope(w));
    if (unknown !== undefined) {
      return bad(
        "invalid_client_metadata",
        `The scope "${clip(unknown)}" is not offered; this server offers ${SCOPES.join(", ")}.`,
      );
    }
    scope = SCOPES.filter((s) => words.includes(s)).join(" ");
  }

  // OAuth 2.1 public clients with the code flow: other grant or response
  // types cannot be honoured, so a client that needs only them is refused;
  // extra ones (refresh_token) are dropped, as RFC 7591 §3.2.1 allows.
  const grants = readList(fields, "grant_types");
  if (typeof grants === "string") return bad("invalid_client_metadata", grants);
  if (grants !== null && !grants.includes("authorization_code")) {
    return bad("invalid_client_metadata", "grant_types must include authorization_code.");
  }
  const responses = readList(fields, "response_types");
  if (typeof responses === "string") return bad("invalid_client_metadata", responses);
  if (responses !== null && !responses.includes("code")) {
    return bad("invalid_client_metadata", "response_types must include code.");
  }
  const method = Object.hasOwn(fields, "token_endpoint_auth_method")
    ? fields.token_endpoint_auth_method
    : undefined;
  if (
    method !== undefined && (typeof method !== "string" || method.length > L.maxListEntryLength)
  ) {
    return bad("invalid_client_metadata", "token_endpoint_auth_method must be a short string.");
  }
  return {
    ok: true,
    metadata: { client_name: clientName, redirect_uris: Object.freeze(redirectUris), scope },
  };
}

function readList(fields: Record<string, unknown>, key: string): readonly string[] | null | string {
  const L = REGISTRATION_LIMITS;
  const value = Object.hasOwn(fields, key) ? fields[key] : undefined;
  if (value === undefined || value === null) return null;
  if (
    !Array.isArray(value) || value.length > L.maxListEntries ||
    !value.every((v) => typeof v === "string" && v.length <= L.maxListEntryLength)
  ) {
    return `${key} must be an array of at most ${L.maxListEntries} short strings.`;
  }
  return value as string[];
}

function bad(
  error: "invalid_redirect_uri" | "invalid_client_metadata",
  description: string,
): RegistrationCheck {
  return { ok: false, error, description };
}

/** Shortens reflected input in error messages. */
function clip(text: string): string {
  return text.length > 80 ? `${text.slice(0, 80)}...` : text;
}

/** The RFC 7591 §3.2.1 response body for a registered client. */
export function registrationResponse(client: RegisteredClient): Record<string, unknown> {
  return {
    client_id: client.client_id,
    client_id_issued_at: client.client_id_issued_at,
    ...(client.client_name !== null ? { client_name: client.client_name } : {}),
    redirect_uris: client.redirect_uris,
    grant_types: ["authorization_code"],
    response_types: ["code"],
    token_endpoint_auth_method: "none",
    ...(client.scope !== "" ? { scope: client.scope } : {}),
  };
}
