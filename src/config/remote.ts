/**
 * `[http]` and `[auth]`: the settings of the remote transport and its
 * co-hosted OAuth authorization server.
 *
 * @module
 */
import type { AuthSettings, HttpSettings } from "./types.ts";
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

/** Defaults from issue 4. */
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
  // Issue 4: `mode = "none"` is refused unless the listen address is loopback.
  if (mode === "none" && listen !== null && !isLoopbackHost(listenHost(listen))) {
    return fail(
      `Policy key "auth.mode" is "none", which is allowed only on a loopback listen address, but http.listen is ${
        quote(listen)
      }.`,
    );
  }
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
    auth: { mode, allowLocalhostBypass, allowPlainPkce, accessTokenTtlSeconds: ttl.value },
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
