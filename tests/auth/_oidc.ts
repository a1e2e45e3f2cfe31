/**
 * Runs the real OpenID provider (`_oidc_provider_source.ts`, npm `oidc-provider`
 * under the system Node) on 127.0.0.1 for the external-mode tests. The
 * package is installed once with npm into a cache folder outside the repo;
 * the provider's signing key is generated here, so tests can also mint
 * tokens the provider never would (expired, another issuer) with its key.
 */
import { join } from "node:path";
import { exportJWK, generateKeyPair, SignJWT } from "jose";
import { OIDC_PROVIDER_SOURCE } from "./_oidc_provider_source.ts";

/** The pinned version the tests were written against. */
const OIDC_PROVIDER_VERSION = "9.13.3";

export interface OidcProvider {
  readonly issuer: string;
  readonly introspectionEndpoint: string;
  /** The provider's own signing key and `kid`. */
  readonly privateKey: CryptoKey;
  readonly kid: string;
  /** How often the provider's key set was fetched so far. */
  jwksHits(): Promise<number>;
  /** A client-credentials access token for `resource` (an RFC 8707 indicator). */
  token(client: string, resource: string, scope?: string): Promise<string>;
  /** Signs arbitrary claims with the provider's key (`at+jwt`, ES256). */
  sign(claims: Record<string, unknown>): Promise<string>;
  stop(): Promise<void>;
}

/** The folder holding `node_modules/oidc-provider`, installed on first use. */
async function providerDir(): Promise<string> {
  const home = Deno.env.get("HOME") ?? "/root";
  const dir = join(home, ".cache", "htmcp-tests", `oidc-provider-${OIDC_PROVIDER_VERSION}`);
  const marker = join(dir, "node_modules", "oidc-provider", "package.json");
  try {
    await Deno.stat(marker);
    return dir;
  } catch {
    // not installed yet
  }
  await Deno.mkdir(dir, { recursive: true });
  await Deno.writeTextFile(
    join(dir, "package.json"),
    JSON.stringify({ name: "htmcp-test-oidc", private: true, type: "module" }),
  );
  const out = await new Deno.Command("npm", {
    args: ["install", "--no-audit", "--no-fund", `oidc-provider@${OIDC_PROVIDER_VERSION}`],
    cwd: dir,
    stdout: "piped",
    stderr: "piped",
  }).output();
  if (!out.success) {
    throw new Error(`npm install oidc-provider failed: ${new TextDecoder().decode(out.stderr)}`);
  }
  return dir;
}

/** Starts the provider and waits for it to listen. */
export async function startOidcProvider(): Promise<OidcProvider> {
  const dir = await providerDir();
  // Node resolves the package from the script's folder, so the script runs from there.
  const script = join(dir, "provider.mjs");
  await Deno.writeTextFile(script, OIDC_PROVIDER_SOURCE);
  const kid = "provider-key-1";
  const { privateKey } = await generateKeyPair("ES256", { extractable: true });
  const jwk = { ...await exportJWK(privateKey), kid, alg: "ES256", use: "sig" };
  const child = new Deno.Command("node", {
    args: [script],
    cwd: dir,
    env: { OIDC_TEST_CONFIG: JSON.stringify({ jwks: { keys: [jwk] } }) },
    stdin: "null",
    stdout: "piped",
    stderr: "null",
  }).spawn();
  const reader = child.stdout.pipeThrough(new TextDecoderStream()).getReader();
  let text = "";
  const timer = setTimeout(() => child.kill("SIGKILL"), 20_000);
  while (!text.includes("\n")) {
    const { done, value } = await reader.read();
    if (done) break;
    text += value;
  }
  clearTimeout(timer);
  reader.releaseLock();
  child.stdout.cancel().catch(() => {});
  if (!text.includes("\n")) {
    await child.status;
    throw new Error("The OpenID provider did not start.");
  }
  const issuer = JSON.parse(text.split("\n")[0] as string).issuer as string;
  const discovery = await (await fetch(`${issuer}/.well-known/openid-configuration`)).json();

  return {
    issuer,
    introspectionEndpoint: discovery.introspection_endpoint,
    privateKey,
    kid,
    async jwksHits() {
      return (await (await fetch(`${issuer}/test/jwks-hits`)).json()).hits;
    },
    async token(client, resource, scope = "shell:read shell:execute") {
      const response = await fetch(`${issuer}/token`, {
        method: "POST",
        headers: {
          authorization: `Basic ${btoa(`${client}:${client}-secret-0123456789abcdef`)}`,
          "content-type": "application/x-www-form-urlencoded",
        },
        body: new URLSearchParams({ grant_type: "client_credentials", resource, scope }),
      });
      const body = await response.json();
      if (response.status !== 200) throw new Error(`token: ${JSON.stringify(body)}`);
      return body.access_token;
    },
    sign(claims) {
      return new SignJWT(claims).setProtectedHeader({ alg: "ES256", typ: "at+jwt", kid })
        .sign(privateKey);
    },
    async stop() {
      try {
        child.kill("SIGTERM");
      } catch {
        // already gone
      }
      await child.status;
    },
  };
}

/**
 * Plays the user at the provider's own login and consent pages (its
 * development interactions): follows redirects with a cookie jar, signs in
 * as `login`, confirms consent, and returns the `code` sent to `redirectUri`.
 * Bounded to 12 steps.
 */
export async function signInAtProvider(
  authorizationUrl: URL,
  login: string,
  redirectUri: string,
): Promise<string> {
  const jar = new Map<string, string>();
  const cookieHeader = () => [...jar].map(([k, v]) => `${k}=${v}`).join("; ");
  const remember = (response: Response) => {
    for (const line of response.headers.getSetCookie()) {
      const [pair] = line.split(";");
      const at = pair?.indexOf("=") ?? -1;
      if (pair !== undefined && at > 0) jar.set(pair.slice(0, at), pair.slice(at + 1));
    }
  };
  let next: { url: URL; init: RequestInit } = { url: authorizationUrl, init: {} };
  for (let step = 0; step < 12; step++) {
    const response = await fetch(next.url, {
      ...next.init,
      redirect: "manual",
      headers: { ...(next.init.headers ?? {}), cookie: cookieHeader() },
    });
    remember(response);
    const location = response.headers.get("location");
    if (location !== null) {
      await response.body?.cancel();
      const target = new URL(location, next.url);
      if (target.href.startsWith(redirectUri)) {
        const code = target.searchParams.get("code");
        if (code === null) throw new Error(`The provider refused: ${target.search}`);
        return code;
      }
      next = { url: target, init: {} };
      continue;
    }
    const html = await response.text();
    const action = /<form[^>]*action="([^"]+)"/.exec(html)?.[1];
    if (action === undefined) throw new Error(`No form at ${next.url}: ${html.slice(0, 300)}`);
    const fields = new URLSearchParams();
    for (const match of html.matchAll(/<input[^>]*type="hidden"[^>]*>/g)) {
      const name = /name="([^"]+)"/.exec(match[0])?.[1];
      const value = /value="([^"]*)"/.exec(match[0])?.[1] ?? "";
      if (name !== undefined) fields.set(name, value);
    }
    if (/name="login"/.test(html)) {
      fields.set("login", login);
      fields.set("password", "any-password");
    }
    next = {
      url: new URL(action, next.url),
      init: {
        method: "POST",
        headers: { "content-type": "application/x-www-form-urlencoded" },
        body: fields.toString(),
      },
    };
  }
  throw new Error("The sign-in did not finish within 12 steps.");
}
