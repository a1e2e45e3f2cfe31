/**
 * Verifies access tokens issued by an external identity provider, with htmcp
 * as a pure resource server. Denies on any doubt:
 *
 * - a JWT (RFC 9068) is checked against the provider's JWKS: signature with an
 *   allowlisted asymmetric algorithm (never `none`, never HS*), `typ`
 *   `at+jwt`, `iss`, `aud` (our canonical `/mcp` resource unless configured),
 *   `exp`, `nbf`, and the claims RFC 9068 §2.2 requires;
 * - an opaque token is asked about at the RFC 7662 introspection endpoint, if
 *   one is configured, with a short, bounded cache;
 * - then the claim-selected profile narrows the scopes; a principal whose
 *   claim matches no profile is refused.
 *
 * @module
 */
import { createRemoteJWKSet, customFetch, decodeProtectedHeader, errors, jwtVerify } from "jose";
import type { ExternalAuthSettings } from "../../config/types.ts";
import { ExpiringMap } from "../_expiring_map.ts";
import { isScope, type Scope } from "../scopes.ts";
import { IAT_SKEW_SECONDS, joseFailure, type VerifyResult } from "./verify.ts";
import {
  boundedFetch,
  DEFAULT_FETCH_BOUNDS,
  type FetchBounds,
  fetchJsonObject,
  ProviderFetchError,
} from "./provider_fetch.ts";

/** Tolerated clock difference between us and the provider for `exp`/`nbf`, in seconds. */
export const CLOCK_TOLERANCE_SECONDS = 30;

/** At most this many introspection answers are cached (the oldest goes first). */
export const INTROSPECTION_CACHE_ENTRIES = 1024;

/** What the external verifier needs besides the settings. */
export interface ExternalVerifierOptions {
  readonly settings: ExternalAuthSettings;
  /** The required `aud` when the settings name none: this server's `/mcp` resource. */
  readonly resource: string;
  /** The introspection client secret (read from its file at startup), or null. */
  readonly introspectionSecret: string | null;
  readonly now: () => number;
  readonly bounds?: FetchBounds;
}

/** The verifier of one server: it holds the key set and the caches. */
export interface ExternalVerifier {
  verify(token: string): Promise<VerifyResult>;
}

/** Builds the verifier. Nothing is fetched until the first token arrives. */
export function createExternalVerifier(options: ExternalVerifierOptions): ExternalVerifier {
  const { settings, now } = options;
  const bounds = options.bounds ?? DEFAULT_FETCH_BOUNDS;
  const audience = settings.audience ?? options.resource;
  const cooldownMs = settings.jwksCooldownSeconds * 1000;
  const keys = new KeySource(settings, bounds, cooldownMs, now);
  const introspection = settings.introspection === null ? null : new Introspector(
    settings.introspection,
    options.introspectionSecret ?? "",
    settings.issuer,
    audience,
    bounds,
    now,
  );

  return {
    async verify(token) {
      let claims: Record<string, unknown>;
      if (isCompactJws(token)) {
        const checked = await verifyJwt(token, keys, settings, audience, now);
        if (!checked.ok) return checked;
        claims = checked.claims;
      } else if (introspection !== null) {
        const checked = await introspection.check(token);
        if (!checked.ok) return checked;
        claims = checked.claims;
      } else {
        return { ok: false, reason: "malformed_token", clientId: null };
      }
      return grant(claims, settings);
    },
  };
}

type Claims =
  | { readonly ok: true; readonly claims: Record<string, unknown> }
  | Extract<VerifyResult, { ok: false }>;

function isCompactJws(token: string): boolean {
  return /^[A-Za-z0-9_-]+\.[A-Za-z0-9_-]*\.[A-Za-z0-9_-]*$/.test(token);
}

async function verifyJwt(
  token: string,
  keys: KeySource,
  settings: ExternalAuthSettings,
  audience: string,
  now: () => number,
): Promise<Claims> {
  // Refuse a disallowed algorithm before anything is fetched: a forged
  // `alg: none` or HS256 token must cost us nothing.
  let alg: unknown;
  try {
    alg = decodeProtectedHeader(token).alg;
  } catch {
    return { ok: false, reason: "malformed_token", clientId: null };
  }
  if (typeof alg !== "string" || !settings.algorithms.includes(alg)) {
    return { ok: false, reason: "wrong_algorithm", clientId: null };
  }
  const jwks = await keys.get();
  if (jwks === null) return { ok: false, reason: "provider_unavailable", clientId: null };
  let payload: Record<string, unknown>;
  try {
    const result = await jwtVerify(token, jwks, {
      algorithms: [...settings.algorithms],
      // jose compares `typ` with the `application/` prefix removed, so both
      // RFC 9068 spellings pass and nothing else does.
      typ: "at+jwt",
      issuer: settings.issuer,
      audience,
      currentDate: new Date(now()),
      clockTolerance: CLOCK_TOLERANCE_SECONDS,
      // RFC 9068 §2.2: every one of these is REQUIRED in a JWT access token.
      requiredClaims: ["iss", "aud", "sub", "exp", "iat", "jti", "client_id"],
    });
    payload = result.payload as Record<string, unknown>;
  } catch (error) {
    if (error instanceof errors.JWKSNoMatchingKey) {
      return { ok: false, reason: "bad_signature", clientId: null };
    }
    if (error instanceof errors.JWKSTimeout || error instanceof ProviderFetchError) {
      return { ok: false, reason: "provider_unavailable", clientId: null };
    }
    if (error instanceof errors.JOSEError && error.code === "ERR_JWKS_INVALID") {
      return { ok: false, reason: "provider_unavailable", clientId: null };
    }
    return { ok: false, reason: joseFailure(error), clientId: null };
  }
  const { sub, iat } = payload;
  if (typeof sub !== "string" || sub === "" || typeof iat !== "number") {
    return { ok: false, reason: "bad_claims", clientId: null };
  }
  if (iat > Math.floor(now() / 1000) + IAT_SKEW_SECONDS) {
    return { ok: false, reason: "issued_in_future", clientId: sub };
  }
  return { ok: true, claims: payload };
}

/**
 * The principal's scopes (ours only: a provider's token also carries scopes
 * for other resources, which mean nothing here), narrowed by its profile.
 */
function grant(claims: Record<string, unknown>, settings: ExternalAuthSettings): VerifyResult {
  const principal = claims.sub;
  const exp = claims.exp;
  if (typeof principal !== "string" || principal === "" || typeof exp !== "number") {
    return { ok: false, reason: "bad_claims", clientId: null };
  }
  const scopes = tokenScopes(claims, settings.scopeClaim);
  if (scopes === null) return { ok: false, reason: "bad_claims", clientId: principal };
  let granted: ReadonlySet<Scope> = scopes;
  if (settings.profiles !== null) {
    const allowed = profileScopes(claims[settings.profiles.claim], settings.profiles.scopes);
    if (allowed === null) return { ok: false, reason: "no_profile", clientId: principal };
    granted = new Set([...scopes].filter((scope) => allowed.has(scope)));
  }
  const jti = typeof claims.jti === "string" ? claims.jti : "";
  return { ok: true, token: { clientId: principal, scopes: granted, jti, expiresAt: exp } };
}

/** Scopes from `scope` (space-separated, RFC 9068) or `scp` (an array, or a string). */
function tokenScopes(claims: Record<string, unknown>, claim: string | null): Set<Scope> | null {
  const names = claim === null ? ["scope", "scp"] : [claim];
  const scopes = new Set<Scope>();
  for (const name of names) {
    const value = claims[name];
    if (value === undefined) continue;
    const words = typeof value === "string"
      ? value.split(" ")
      : Array.isArray(value) && value.every((v) => typeof v === "string")
      ? value as string[]
      : null;
    if (words === null) return null;
    for (const word of words) if (isScope(word)) scopes.add(word);
    return scopes;
  }
  return scopes;
}

/**
 * The union of the scopes of every profile the claim names, or null when it
 * names none (a string claim is one value; an array is several groups).
 */
function profileScopes(
  value: unknown,
  profiles: ReadonlyMap<string, readonly string[]>,
): Set<string> | null {
  const values = typeof value === "string"
    ? [value]
    : Array.isArray(value)
    ? value.filter((v): v is string => typeof v === "string")
    : [];
  let allowed: Set<string> | null = null;
  for (const v of values) {
    // A Map, so a claim value like "__proto__" or "constructor" is just unknown.
    const scopes = profiles.get(v);
    if (scopes === undefined) continue;
    allowed ??= new Set();
    for (const scope of scopes) allowed.add(scope);
  }
  return allowed;
}

type KeySet = ReturnType<typeof createRemoteJWKSet>;

/**
 * The provider's key set. Its URL comes from the settings or from the
 * issuer's discovery document. Every fetch of either goes through a gate:
 * at most one of each per cool-down, so no stream of tokens with unknown `kid`s (or an
 * unreachable provider) can make us fetch per request. jose's own cool-down
 * covers unknown `kid`s after a successful fetch; the gate also covers
 * failures, which jose would retry on every call.
 */
class KeySource {
  #jwks: KeySet | null = null;
  #discovering: Promise<KeySet | null> | null = null;
  /** When discovery, and a key-set fetch, were last attempted (each has its own gate). */
  readonly #lastAttempt = { discovery: -Infinity, keys: -Infinity };
  readonly #settings: ExternalAuthSettings;
  readonly #bounds: FetchBounds;
  readonly #cooldownMs: number;
  readonly #now: () => number;

  constructor(
    settings: ExternalAuthSettings,
    bounds: FetchBounds,
    cooldownMs: number,
    now: () => number,
  ) {
    this.#settings = settings;
    this.#bounds = bounds;
    this.#cooldownMs = cooldownMs;
    this.#now = now;
  }

  /** The key set, or null while the provider's discovery document is unavailable. */
  get(): Promise<KeySet | null> {
    if (this.#jwks !== null) return Promise.resolve(this.#jwks);
    this.#discovering ??= this.#discover().finally(() => {
      this.#discovering = null;
    });
    return this.#discovering;
  }

  async #discover(): Promise<KeySet | null> {
    let jwksUri = this.#settings.jwksUri;
    if (jwksUri === null) {
      if (!this.#mayFetch("discovery")) return null;
      try {
        jwksUri = await discoverJwksUri(this.#settings.issuer, this.#bounds);
      } catch {
        return null;
      }
    }
    this.#jwks = createRemoteJWKSet(new URL(jwksUri), {
      timeoutDuration: this.#bounds.timeoutMs,
      cooldownDuration: this.#cooldownMs,
      cacheMaxAge: Math.max(this.#cooldownMs, 600_000),
      [customFetch]: (url, init) => {
        if (!this.#mayFetch("keys")) {
          return Promise.reject(new ProviderFetchError("The key set was fetched too recently."));
        }
        return keySetResponse(url, init, this.#bounds);
      },
    });
    return this.#jwks;
  }

  /** True (and the attempt counted) when the cool-down since the last fetch has passed. */
  #mayFetch(what: "discovery" | "keys"): boolean {
    const now = this.#now();
    if (now - this.#lastAttempt[what] < this.#cooldownMs) return false;
    this.#lastAttempt[what] = now;
    return true;
  }
}

/**
 * The key-set response, checked here so that a provider answering 5xx or
 * garbage is "unavailable" (503, retry later), never mistaken for a bad token.
 */
async function keySetResponse(
  url: string,
  init: RequestInit,
  bounds: FetchBounds,
): Promise<Response> {
  const response = await boundedFetch(url, init, bounds);
  if (response.status !== 200) {
    throw new ProviderFetchError(`${url}: HTTP status ${response.status}.`, "status");
  }
  const text = await response.text();
  try {
    JSON.parse(text);
  } catch {
    throw new ProviderFetchError(`${url}: the body is not JSON.`, "not_json");
  }
  return new Response(text, { status: 200, headers: response.headers });
}

/**
 * Reads `jwks_uri` from the issuer's OpenID Connect discovery document, or
 * its RFC 8414 metadata. The document must name the same issuer (RFC 8414
 * §3.3), or an attacker's metadata could point us at their keys.
 *
 * @param issuer The configured issuer URL.
 * @param bounds The time and size limits of each fetch.
 * @returns The `jwks_uri` the issuer's own metadata names.
 * @throws ProviderFetchError when neither document can be read, names this issuer and
 *   an https `jwks_uri`.
 */
export async function discoverJwksUri(issuer: string, bounds: FetchBounds): Promise<string> {
  const base = issuer.endsWith("/") ? issuer.slice(0, -1) : issuer;
  const url = new URL(issuer);
  const path = url.pathname === "/" ? "" : url.pathname;
  const candidates = [
    `${base}/.well-known/openid-configuration`,
    `${url.origin}/.well-known/oauth-authorization-server${path}`,
  ];
  let lastError: unknown = null;
  for (const candidate of candidates) {
    try {
      const doc = await fetchJsonObject(
        candidate,
        { headers: { accept: "application/json" } },
        bounds,
      );
      if (doc.issuer !== issuer) {
        throw new ProviderFetchError(`${candidate}: the document names another issuer.`);
      }
      const jwksUri = doc.jwks_uri;
      if (typeof jwksUri !== "string" || !isSafeProviderUrl(jwksUri)) {
        throw new ProviderFetchError(`${candidate}: no usable https jwks_uri.`);
      }
      return jwksUri;
    } catch (error) {
      lastError = error;
    }
  }
  throw lastError;
}

/** https, or http on a loopback host (the same rule the policy loader applies). */
function isSafeProviderUrl(text: string): boolean {
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    return false;
  }
  if (url.protocol === "https:") return true;
  return url.protocol === "http:" &&
    (url.hostname === "localhost" || url.hostname === "[::1]" ||
      /^127\.\d{1,3}\.\d{1,3}\.\d{1,3}$/.test(url.hostname));
}

/** RFC 7662 introspection with a short cache of the answers. */
class Introspector {
  readonly #cache: ExpiringMap<string, Claims>;
  readonly #endpoint: string;
  readonly #authorization: string;
  readonly #cacheMs: number;
  readonly #issuer: string;
  readonly #audience: string;
  readonly #bounds: FetchBounds;
  readonly #now: () => number;

  constructor(
    config: NonNullable<ExternalAuthSettings["introspection"]>,
    secret: string,
    issuer: string,
    audience: string,
    bounds: FetchBounds,
    now: () => number,
  ) {
    this.#cache = new ExpiringMap(INTROSPECTION_CACHE_ENTRIES, "evict-oldest", now);
    this.#endpoint = config.endpoint;
    // RFC 6749 §2.3.1: both parts form-encoded before base64.
    const user = encodeURIComponent(config.clientId);
    this.#authorization = `Basic ${btoa(`${user}:${encodeURIComponent(secret)}`)}`;
    this.#cacheMs = config.cacheSeconds * 1000;
    this.#issuer = issuer;
    this.#audience = audience;
    this.#bounds = bounds;
    this.#now = now;
  }

  async check(token: string): Promise<Claims> {
    // The cache key is a digest: the map never holds a usable token.
    const key = await digest(token);
    const cached = this.#cache.get(key);
    if (cached !== undefined) return cached;
    let body: Record<string, unknown>;
    try {
      body = await fetchJsonObject(this.#endpoint, {
        method: "POST",
        headers: {
          authorization: this.#authorization,
          "content-type": "application/x-www-form-urlencoded",
          accept: "application/json",
        },
        body: new URLSearchParams({ token, token_type_hint: "access_token" }).toString(),
      }, this.#bounds);
    } catch {
      // Not cached: the provider being down says nothing about the token.
      return { ok: false, reason: "provider_unavailable", clientId: null };
    }
    const result = this.#judge(body);
    const nowMs = this.#now();
    // A refusal is cached as briefly as an answer; an answer never past `exp`.
    const exp = typeof body.exp === "number" ? body.exp * 1000 : nowMs + this.#cacheMs;
    const until = Math.min(nowMs + this.#cacheMs, exp);
    if (until > nowMs) this.#cache.set(key, result, until);
    return result;
  }

  #judge(body: Record<string, unknown>): Claims {
    if (body.active !== true) return { ok: false, reason: "token_inactive", clientId: null };
    // RFC 7662 makes `sub` optional; a client-credentials token speaks for its client.
    const sub = nonEmpty(body.sub) ?? nonEmpty(body.client_id);
    if (body.iss !== undefined && body.iss !== this.#issuer) {
      return { ok: false, reason: "wrong_issuer", clientId: sub };
    }
    // The audience is what stops a token for another service being replayed
    // here: an answer without one is refused, not assumed to be ours.
    const aud = body.aud;
    const audiences = typeof aud === "string" ? [aud] : Array.isArray(aud) ? aud : [];
    if (!audiences.includes(this.#audience)) {
      return { ok: false, reason: "wrong_audience", clientId: sub };
    }
    const nowSeconds = Math.floor(this.#now() / 1000);
    if (typeof body.exp !== "number" || body.exp + CLOCK_TOLERANCE_SECONDS <= nowSeconds) {
      return { ok: false, reason: "expired", clientId: sub };
    }
    if (typeof body.nbf === "number" && body.nbf - CLOCK_TOLERANCE_SECONDS > nowSeconds) {
      return { ok: false, reason: "issued_in_future", clientId: sub };
    }
    if (sub === null) return { ok: false, reason: "bad_claims", clientId: null };
    return { ok: true, claims: { ...body, sub } };
  }
}

async function digest(text: string): Promise<string> {
  const hash = await crypto.subtle.digest("SHA-256", new TextEncoder().encode(text));
  return Array.from(new Uint8Array(hash), (b) => b.toString(16).padStart(2, "0")).join("");
}

function nonEmpty(value: unknown): string | null {
  return typeof value === "string" && value !== "" ? value : null;
}
