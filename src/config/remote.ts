/**
 * `[http]` and `[auth]`: the settings of the remote transport and its
 * co-hosted OAuth authorization server.
 *
 * @module
 */
import type { AuthSettings, ExternalAuthSettings, HttpSettings } from "./types.ts";
import type { PolicyFile } from "./schema.ts";
import { type Checked, fail, pass, quote } from "./_checked.ts";
import {
  checkBaseUrl,
  checkHost,
  checkListen,
  checkOrigin,
  isLoopbackHost,
  listenHost,
} from "./http.ts";
import { absolutePath, isInside } from "./paths.ts";
import { isScope, SCOPES } from "../auth/scopes.ts";

/** Defaults of the remote-access keys. */
export const HTTP_DEFAULTS = {
  maxRequestBytes: 16_000_000,
  maxRegistrationBytes: 16_384,
  maxConcurrentPerClient: 2,
  maxConnections: 0,
  headerTimeoutMs: 10_000,
  idleTimeoutMs: 120_000,
} as const;

/** `HTMCP_OAUTH_ACCESS_TOKEN_TTL_S` default and bounds, in seconds. */
export const ACCESS_TOKEN_TTL = { default: 3600, min: 1, max: 86_400 } as const;

/** Values for the remote settings that come from outside the policy file. */
export interface RemoteInputs {
  /** `HTMCP_BASE_URL`, when set. */
  readonly envBaseUrl: string | undefined;
  /** `HTMCP_OAUTH_ACCESS_TOKEN_TTL_S`, when set. */
  readonly envTokenTtl: string | undefined;
  /** The CLI's `--http HOST:PORT`, when given. */
  readonly listenOverride: string | undefined;
  /** Folder relative file keys resolve against. */
  readonly baseDir: string;
  readonly jailRoot: string;
}

/**
 * Validates `[http]` and `[auth]`.
 *
 * @returns the settings and any warnings, or a sentence naming the key
 */
export async function buildRemoteSettings(
  file: PolicyFile,
  inputs: RemoteInputs,
): Promise<Checked<{ http: HttpSettings; auth: AuthSettings; warnings: string[] }>> {
  const section = file.http ?? {};
  const warnings: string[] = [];

  let listen: string | null = null;
  if (inputs.listenOverride !== undefined) {
    const checked = checkListen(inputs.listenOverride, 'Policy key "http.listen" (from --http)');
    if (!checked.ok) return checked;
    listen = checked.value;
  } else if (section.listen !== undefined) {
    const checked = checkListen(section.listen, 'Policy key "http.listen"');
    if (!checked.ok) return checked;
    listen = checked.value;
  }

  let baseUrl: string | null = null;
  if (inputs.envBaseUrl !== undefined) {
    const checked = checkBaseUrl(
      inputs.envBaseUrl,
      'Policy key "http.base_url" (from HTMCP_BASE_URL)',
    );
    if (!checked.ok) return checked;
    baseUrl = checked.value;
  } else if (section.base_url !== undefined) {
    const checked = checkBaseUrl(section.base_url, 'Policy key "http.base_url"');
    if (!checked.ok) return checked;
    baseUrl = checked.value;
  }

  if ((section.tls_cert === undefined) !== (section.tls_key === undefined)) {
    const missing = section.tls_cert === undefined ? "http.tls_cert" : "http.tls_key";
    return fail(
      `Policy key "${missing}" is missing; TLS needs both http.tls_cert and http.tls_key.`,
    );
  }
  const tlsCert = await tlsFile(section.tls_cert, "http.tls_cert", inputs);
  if (!tlsCert.ok) return tlsCert;
  const tlsKey = await tlsFile(section.tls_key, "http.tls_key", inputs);
  if (!tlsKey.ok) return tlsKey;

  const allowedOrigins: string[] = [];
  for (const [index, value] of (section.allowed_origins ?? []).entries()) {
    const checked = checkOrigin(value, `Policy key "http.allowed_origins[${index + 1}]"`);
    if (!checked.ok) return checked;
    if (!allowedOrigins.includes(checked.value)) allowedOrigins.push(checked.value);
  }
  const allowedHosts: string[] = [];
  for (const [index, value] of (section.allowed_hosts ?? []).entries()) {
    const checked = checkHost(value, `Policy key "http.allowed_hosts[${index + 1}]"`);
    if (!checked.ok) return checked;
    if (!allowedHosts.includes(checked.value)) allowedHosts.push(checked.value);
  }

  const authSection = file.auth ?? {};
  const mode = authSection.mode ?? "oauth";
  // Without authentication only this machine may connect: `mode = "none"` is
  // refused unless the listen address is loopback.
  if (mode === "none" && listen !== null && !isLoopbackHost(listenHost(listen))) {
    return fail(
      `Policy key "auth.mode" is "none", which is allowed only on a loopback listen address, but http.listen is ${
        quote(listen)
      }.`,
    );
  }
  const external = await buildExternalSettings(authSection, mode, inputs);
  if (!external.ok) return external;
  const clientIdMetadataAllow = checkClientIdMetadataAllow(authSection, mode);
  if (!clientIdMetadataAllow.ok) return clientIdMetadataAllow;
  const ttl = parseTokenTtl(inputs.envTokenTtl);
  if (!ttl.ok) return ttl;
  const allowLocalhostBypass = authSection.allow_localhost_bypass ?? false;
  const allowPlainPkce = authSection.allow_plain_pkce ?? false;
  if (allowLocalhostBypass) {
    warnings.push(
      'Policy key "auth.allow_localhost_bypass" is true: any local user or process can call the server without a token; do not use it on a shared host.',
    );
  }
  if (allowPlainPkce) {
    warnings.push(
      'Policy key "auth.allow_plain_pkce" is true: the "plain" PKCE method does not protect an intercepted authorization code.',
    );
  }

  return pass({
    http: {
      listen,
      baseUrl,
      tlsCert: tlsCert.value,
      tlsKey: tlsKey.value,
      allowedOrigins,
      allowedHosts,
      maxRequestBytes: section.max_http_request_bytes ?? HTTP_DEFAULTS.maxRequestBytes,
      maxRegistrationBytes: section.max_registration_bytes ?? HTTP_DEFAULTS.maxRegistrationBytes,
      maxConcurrentPerClient: section.max_concurrent_per_client ??
        HTTP_DEFAULTS.maxConcurrentPerClient,
      maxConnections: section.max_connections ?? HTTP_DEFAULTS.maxConnections,
      headerTimeoutMs: section.header_timeout_ms ?? HTTP_DEFAULTS.headerTimeoutMs,
      idleTimeoutMs: section.idle_timeout_ms ?? HTTP_DEFAULTS.idleTimeoutMs,
    },
    auth: {
      mode,
      allowLocalhostBypass,
      allowPlainPkce,
      accessTokenTtlSeconds: ttl.value,
      clientIdMetadataAllow: clientIdMetadataAllow.value,
      external: external.value,
    },
    warnings,
  });
}

/** A TLS file must exist, and must not sit where the model could read or replace it. */
async function tlsFile(
  value: string | undefined,
  key: string,
  inputs: RemoteInputs,
): Promise<Checked<string | null>> {
  if (value === undefined) return pass(null);
  const label = `Policy key "${key}"`;
  const absolute = absolutePath(value, inputs.baseDir, label);
  if (!absolute.ok) return absolute;
  let real: string;
  try {
    real = await Deno.realPath(absolute.value);
    if (!(await Deno.stat(real)).isFile) {
      return fail(`${label} names ${quote(absolute.value)}, which is not a file.`);
    }
  } catch (error) {
    const why = error instanceof Deno.errors.NotFound
      ? "it does not exist"
      : error instanceof Error
      ? error.message
      : String(error);
    return fail(`${label} names ${quote(absolute.value)}, which cannot be used: ${why}.`);
  }
  if (isInside(inputs.jailRoot, real)) {
    return fail(
      `${label} names ${
        quote(real)
      }, which is inside the jail root, where the model could read or replace it.`,
    );
  }
  return pass(real);
}

function parseTokenTtl(value: string | undefined): Checked<number> {
  if (value === undefined) return pass(ACCESS_TOKEN_TTL.default);
  const seconds = /^\d{1,9}$/.test(value) ? Number(value) : NaN;
  if (!(seconds >= ACCESS_TOKEN_TTL.min && seconds <= ACCESS_TOKEN_TTL.max)) {
    return fail(
      `Environment variable HTMCP_OAUTH_ACCESS_TOKEN_TTL_S must be a whole number of seconds from ${ACCESS_TOKEN_TTL.min} to ${ACCESS_TOKEN_TTL.max}, got ${
        quote(value)
      }.`,
    );
  }
  return pass(seconds);
}

/** Defaults of the external-provider keys. */
export const EXTERNAL_DEFAULTS = {
  algorithms: ["RS256", "PS256", "ES256", "EdDSA"],
  jwksCooldownSeconds: 30,
  introspectionCacheSeconds: 60,
} as const;

/**
 * Asymmetric JWS algorithms we accept from a provider. `none` carries no
 * signature, and an HS* algorithm with a public key from a JWKS is the classic
 * algorithm-confusion forgery (anyone holding the public key could "sign").
 */
const ASYMMETRIC_ALGORITHMS: ReadonlySet<string> = new Set([
  "RS256",
  "RS384",
  "RS512",
  "PS256",
  "PS384",
  "PS512",
  "ES256",
  "ES384",
  "ES512",
  "EdDSA",
  "Ed25519",
]);

/** The keys that only mean something with `mode = "external"`. */
const EXTERNAL_KEYS = [
  "issuer",
  "audience",
  "jwks_uri",
  "algorithms",
  "jwks_cooldown_seconds",
  "scope_claim",
  "introspection_endpoint",
  "introspection_client_id",
  "introspection_secret_file",
  "introspection_cache_seconds",
  "profiles",
] as const;

type AuthSection = NonNullable<PolicyFile["auth"]>;

/** Validates the `[auth]` keys of an external identity provider. */
async function buildExternalSettings(
  section: AuthSection,
  mode: AuthSettings["mode"],
  inputs: RemoteInputs,
): Promise<Checked<ExternalAuthSettings | null>> {
  if (mode !== "external") {
    // A provider key under another mode would be silently ignored: the operator
    // believes tokens are checked against a provider that is never asked.
    const stray = EXTERNAL_KEYS.find((key) => section[key] !== undefined);
    if (stray !== undefined) {
      return fail(
        `Policy key "auth.${stray}" is only used with auth.mode = "external", but auth.mode is "${mode}".`,
      );
    }
    return pass(null);
  }
  if (section.issuer === undefined) {
    return fail('Policy key "auth.issuer" is required with auth.mode = "external".');
  }
  const issuer = checkProviderUrl(section.issuer, "auth.issuer", true);
  if (!issuer.ok) return issuer;
  let audience: string | null = null;
  if (section.audience !== undefined) {
    const checked = checkProviderUrl(section.audience, "auth.audience", false);
    if (!checked.ok) return checked;
    audience = checked.value;
  }
  let jwksUri: string | null = null;
  if (section.jwks_uri !== undefined) {
    const checked = checkProviderUrl(section.jwks_uri, "auth.jwks_uri", false);
    if (!checked.ok) return checked;
    jwksUri = checked.value;
  }
  const algorithms: string[] = [];
  for (const [index, value] of (section.algorithms ?? EXTERNAL_DEFAULTS.algorithms).entries()) {
    if (!ASYMMETRIC_ALGORITHMS.has(value)) {
      return fail(
        `Policy key "auth.algorithms[${index + 1}]" is ${
          quote(value)
        }, which is not an asymmetric JWS algorithm (none and HS* are never accepted).`,
      );
    }
    if (!algorithms.includes(value)) algorithms.push(value);
  }
  if (algorithms.length === 0) {
    return fail('Policy key "auth.algorithms" must list at least one algorithm.');
  }

  let introspection: ExternalAuthSettings["introspection"] = null;
  const introspectionKeys = [
    section.introspection_endpoint,
    section.introspection_client_id,
    section.introspection_secret_file,
  ];
  if (introspectionKeys.some((value) => value !== undefined)) {
    if (section.introspection_endpoint === undefined) {
      return fail('Policy key "auth.introspection_endpoint" is missing; introspection needs it.');
    }
    if (section.introspection_client_id === undefined) {
      return fail('Policy key "auth.introspection_client_id" is missing; introspection needs it.');
    }
    if (section.introspection_secret_file === undefined) {
      return fail(
        'Policy key "auth.introspection_secret_file" is missing; introspection needs the client secret in a file.',
      );
    }
    const endpoint = checkProviderUrl(
      section.introspection_endpoint,
      "auth.introspection_endpoint",
      false,
    );
    if (!endpoint.ok) return endpoint;
    const secretFile = await secretFilePath(section.introspection_secret_file, inputs);
    if (!secretFile.ok) return secretFile;
    introspection = {
      endpoint: endpoint.value,
      clientId: section.introspection_client_id,
      secretFile: secretFile.value,
      cacheSeconds: section.introspection_cache_seconds ??
        EXTERNAL_DEFAULTS.introspectionCacheSeconds,
    };
  } else if (section.introspection_cache_seconds !== undefined) {
    return fail(
      'Policy key "auth.introspection_cache_seconds" is set, but auth.introspection_endpoint is not.',
    );
  }

  let profiles: ExternalAuthSettings["profiles"] = null;
  if (section.profiles !== undefined) {
    const scopes = new Map<string, readonly string[]>();
    for (const [value, list] of Object.entries(section.profiles.scopes)) {
      for (const [index, scope] of list.entries()) {
        if (!isScope(scope)) {
          return fail(
            `Policy key "auth.profiles.scopes.${value}[${index + 1}]" is ${
              quote(scope)
            }, which is not a scope of this server (${SCOPES.map((s) => `"${s}"`).join(", ")}).`,
          );
        }
      }
      scopes.set(value, Object.freeze([...new Set(list)]));
    }
    if (scopes.size === 0) {
      return fail(
        'Policy key "auth.profiles.scopes" lists no claim value, so every principal would be refused.',
      );
    }
    profiles = { claim: section.profiles.claim, scopes };
  }

  return pass({
    issuer: issuer.value,
    audience,
    jwksUri,
    algorithms,
    jwksCooldownSeconds: section.jwks_cooldown_seconds ?? EXTERNAL_DEFAULTS.jwksCooldownSeconds,
    scopeClaim: section.scope_claim ?? null,
    introspection,
    profiles,
  });
}

/**
 * A provider URL: https, or plain http on a loopback host only (a token
 * verified against keys fetched in the clear could be forged by anyone on the
 * path). An issuer keeps its exact text, because `iss` is compared as a string.
 */
function checkProviderUrl(value: string, key: string, isIssuer: boolean): Checked<string> {
  const label = `Policy key "${key}"`;
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    return fail(`${label} is ${quote(value)}, which is not a URL.`);
  }
  if (url.protocol !== "https:" && url.protocol !== "http:") {
    return fail(`${label} is ${quote(value)}, but it must use https.`);
  }
  if (url.protocol === "http:" && !isLoopbackHost(url.hostname)) {
    return fail(
      `${label} is ${quote(value)}, but it must use https (plain http only for a loopback host).`,
    );
  }
  if (url.username !== "" || url.password !== "" || url.hash !== "") {
    return fail(`${label} is ${quote(value)}, which must not contain a user name or fragment.`);
  }
  if (isIssuer && url.search !== "") {
    return fail(`${label} is ${quote(value)}, but an issuer has no query (RFC 8414).`);
  }
  return pass(isIssuer ? value : url.href);
}

/** The introspection secret's file: must exist and sit outside the jail. */
async function secretFilePath(value: string, inputs: RemoteInputs): Promise<Checked<string>> {
  const checked = await tlsFile(value, "auth.introspection_secret_file", inputs);
  if (!checked.ok) return checked;
  return pass(checked.value as string);
}

/**
 * `client_id_metadata_allow`: each entry an exact document URL (https, or
 * http on a loopback host, with a path) or a bare host name. There is no
 * wildcard: the server's network grant names each host exactly.
 */
function checkClientIdMetadataAllow(
  section: AuthSection,
  mode: AuthSettings["mode"],
): Checked<readonly string[]> {
  const entries = section.client_id_metadata_allow;
  if (entries === undefined) return pass([]);
  if (mode !== "oauth") {
    return fail(
      `Policy key "auth.client_id_metadata_allow" is used only by the built-in authorization server (auth.mode = "oauth"), but auth.mode is "${mode}".`,
    );
  }
  const allow: string[] = [];
  for (const [index, entry] of entries.entries()) {
    const label = `Policy key "auth.client_id_metadata_allow[${index + 1}]"`;
    if (entry.includes("/")) {
      const checked = checkProviderUrl(entry, `auth.client_id_metadata_allow[${index + 1}]`, false);
      if (!checked.ok) return checked;
      if (new URL(checked.value).pathname === "/" || checked.value !== entry) {
        return fail(
          `${label} is ${
            quote(entry)
          }, but a client-id URL must be written in its normal form and have a path.`,
        );
      }
      allow.push(entry);
    } else if (
      /^(?=.{1,253}$)[a-z0-9]([a-z0-9-]*[a-z0-9])?(\.[a-z0-9]([a-z0-9-]*[a-z0-9])?)*$/.test(entry)
    ) {
      allow.push(entry);
    } else {
      return fail(
        `${label} is ${quote(entry)}, which is neither a client-id URL nor a lower-case host name.`,
      );
    }
  }
  return pass(Object.freeze([...new Set(allow)]));
}
