/**
 * The test side of the OAuth flow, as a real MCP client performs it: an
 * `OAuthClientProvider` for the SDK client that records the authorization URL
 * instead of opening a browser, and `approve()`, which plays the operator: it
 * fetches the approval page, posts the form with the admin PIN and returns the
 * code from the redirect.
 */
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { UnauthorizedError } from "@modelcontextprotocol/sdk/client/auth.js";
import type { OAuthClientProvider } from "@modelcontextprotocol/sdk/client/auth.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import type {
  OAuthClientInformationMixed,
  OAuthClientMetadata,
  OAuthTokens,
} from "@modelcontextprotocol/sdk/shared/auth.js";

export const REDIRECT_URI = "http://127.0.0.1:45123/callback";

/** An in-memory client provider that never opens a browser. */
export class RecordingProvider implements OAuthClientProvider {
  authorizationUrl: URL | null = null;
  #client: OAuthClientInformationMixed | undefined;
  #tokens: OAuthTokens | undefined;
  #verifier = "";
  readonly #scope: string;

  constructor(scope = "shell:read shell:execute") {
    this.#scope = scope;
  }

  get redirectUrl(): string {
    return REDIRECT_URI;
  }

  get clientMetadata(): OAuthClientMetadata {
    return {
      client_name: "htmcp e2e client",
      redirect_uris: [REDIRECT_URI],
      grant_types: ["authorization_code"],
      response_types: ["code"],
      token_endpoint_auth_method: "none",
      scope: this.#scope,
    };
  }

  state(): string {
    return crypto.randomUUID();
  }
  clientInformation(): OAuthClientInformationMixed | undefined {
    return this.#client;
  }
  saveClientInformation(info: OAuthClientInformationMixed): void {
    this.#client = info;
  }
  tokens(): OAuthTokens | undefined {
    return this.#tokens;
  }
  saveTokens(tokens: OAuthTokens): void {
    this.#tokens = tokens;
  }
  redirectToAuthorization(url: URL): void {
    this.authorizationUrl = url;
  }
  saveCodeVerifier(verifier: string): void {
    this.#verifier = verifier;
  }
  codeVerifier(): string {
    return this.#verifier;
  }
}

/**
 * Plays the operator: opens the approval page, approves with `pin`.
 *
 * @returns The `code` from the redirect (and the whole redirect URL).
 */
export async function approve(
  authorizationUrl: URL,
  pin: string,
): Promise<{ code: string; redirect: URL }> {
  const page = await fetch(authorizationUrl);
  const html = await page.text();
  if (page.status !== 200) throw new Error(`Approval page: ${page.status} ${html}`);
  const txn = /name="txn" value="([^"]+)"/.exec(html)?.[1];
  if (txn === undefined) throw new Error(`No transaction id in the approval page: ${html}`);
  const csrf = /name="csrf" value="([^"]+)"/.exec(html)?.[1];
  if (csrf === undefined) throw new Error(`No form token in the approval page: ${html}`);
  const posted = await fetch(new URL("/authorize", authorizationUrl), {
    method: "POST",
    headers: { "content-type": "application/x-www-form-urlencoded" },
    body: new URLSearchParams({ txn, csrf, pin, decision: "approve" }),
    redirect: "manual",
  });
  await posted.body?.cancel();
  const location = posted.headers.get("location");
  if (location === null) throw new Error(`Approval did not redirect: ${posted.status}`);
  const redirect = new URL(location);
  const code = redirect.searchParams.get("code");
  if (code === null) throw new Error(`No code in the redirect ${location}`);
  return { code, redirect };
}

/** A connected SDK client and its provider. */
export interface OAuthConnection {
  readonly client: Client;
  readonly transport: StreamableHTTPClientTransport;
  readonly provider: RecordingProvider;
  close(): Promise<void>;
}

/**
 * Connects the real SDK client to `mcpUrl` through the whole OAuth flow:
 * discovery (401 -> protected-resource metadata -> authorization-server
 * metadata), dynamic registration, PKCE S256 with the resource parameter,
 * operator approval with the PIN, code exchange, then `initialize`.
 */
export async function connectWithOAuth(
  mcpUrl: URL,
  pin: string,
  scope?: string,
  provider: RecordingProvider = new RecordingProvider(scope),
): Promise<OAuthConnection> {
  const first = new StreamableHTTPClientTransport(mcpUrl, { authProvider: provider });
  const probe = new Client({ name: "htmcp-e2e", version: "0" });
  try {
    await probe.connect(first);
    throw new Error("The server let an unauthenticated client connect.");
  } catch (error) {
    if (!(error instanceof UnauthorizedError)) throw error;
  }
  await probe.close();
  if (provider.authorizationUrl === null) throw new Error("No authorization URL was recorded.");
  const authorizationUrl = new URL(provider.authorizationUrl);
  // The SDK asks for the scopes the 401 challenge lists (all of them); a
  // narrower grant is what an operator-side choice would produce.
  if (scope !== undefined) authorizationUrl.searchParams.set("scope", scope);
  const { code } = await approve(authorizationUrl, pin);
  await first.finishAuth(code);
  const transport = new StreamableHTTPClientTransport(mcpUrl, { authProvider: provider });
  const client = new Client({ name: "htmcp-e2e", version: "0" });
  await client.connect(transport);
  return {
    client,
    transport,
    provider,
    async close() {
      await transport.terminateSession().catch(() => {});
      await client.close();
    },
  };
}

/** A token of `clientId` for `scope` alone, through the whole flow (approved with the PIN). */
export async function tokenForClient(
  base: string,
  clientId: string,
  scope: string,
  pin: string,
): Promise<string> {
  const verifier = crypto.randomUUID() + crypto.randomUUID();
  const digest = await crypto.subtle.digest("SHA-256", new TextEncoder().encode(verifier));
  const challenge = btoa(String.fromCharCode(...new Uint8Array(digest)))
    .replaceAll("+", "-").replaceAll("/", "_").replaceAll("=", "");
  const authorize = new URL(`${base}/authorize`);
  for (
    const [key, value] of Object.entries({
      response_type: "code",
      client_id: clientId,
      redirect_uri: REDIRECT_URI,
      code_challenge: challenge,
      code_challenge_method: "S256",
      state: "s",
      resource: `${base}/mcp`,
      scope,
    })
  ) authorize.searchParams.set(key, value);
  const { code } = await approve(authorize, pin);
  const token = await fetch(`${base}/token`, {
    method: "POST",
    headers: { "content-type": "application/x-www-form-urlencoded" },
    body: new URLSearchParams({
      grant_type: "authorization_code",
      code,
      code_verifier: verifier,
      client_id: clientId,
      redirect_uri: REDIRECT_URI,
      resource: `${base}/mcp`,
    }),
  });
  const body = await token.json();
  if (token.status !== 200) throw new Error(`token: ${token.status} ${JSON.stringify(body)}`);
  return body.access_token;
}
