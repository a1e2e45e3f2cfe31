/**
 * Interoperability with the real MCP SDK client's OAuth code (`auth()` from
 * `@modelcontextprotocol/sdk/client/auth.js`): discovery from the 401
 * challenge, RFC 9728 and RFC 8414 metadata, dynamic registration, PKCE S256,
 * the resource parameter and the code exchange, with the SDK's `fetchFn`
 * routed straight into `auth.handle()` (the HTTP transport's own tests run the
 * same client over a real socket).
 */
import assert from "node:assert/strict";
import {
  auth as sdkAuth,
  extractWWWAuthenticateParams,
  type OAuthClientProvider,
} from "@modelcontextprotocol/sdk/client/auth.js";
import type {
  OAuthClientInformationMixed,
  OAuthClientMetadata,
  OAuthTokens,
} from "@modelcontextprotocol/sdk/shared/auth.js";
import { BASE, call, formOf, PIN, REDIRECT, RESOURCE, withAuth } from "./_fixtures.ts";

class MemoryProvider implements OAuthClientProvider {
  client: OAuthClientInformationMixed | undefined;
  saved: OAuthTokens | undefined;
  verifier = "";
  authorizationUrl: URL | null = null;
  readonly redirectUrl = REDIRECT;
  readonly clientMetadata: OAuthClientMetadata = {
    client_name: "SDK test client",
    redirect_uris: [REDIRECT],
    grant_types: ["authorization_code", "refresh_token"],
    response_types: ["code"],
    token_endpoint_auth_method: "none",
  };
  state() {
    return "sdk-state-1";
  }
  clientInformation() {
    return this.client;
  }
  saveClientInformation(info: OAuthClientInformationMixed) {
    this.client = info;
  }
  tokens() {
    return this.saved;
  }
  saveTokens(tokens: OAuthTokens) {
    this.saved = tokens;
  }
  redirectToAuthorization(url: URL) {
    this.authorizationUrl = url;
  }
  saveCodeVerifier(verifier: string) {
    this.verifier = verifier;
  }
  codeVerifier() {
    return this.verifier;
  }
}

Deno.test("the MCP SDK client discovers, registers, authorizes and exchanges the code", async () => {
  await withAuth({}, async (f) => {
    const requested: string[] = [];
    const fetchFn = async (
      input: string | URL | Request,
      init?: RequestInit,
    ): Promise<Response> => {
      const request = new Request(input, init);
      requested.push(`${request.method} ${new URL(request.url).pathname}`);
      const response = await f.auth.handle(request, { remoteAddr: "127.0.0.1" });
      return response ?? new Response("not found", { status: 404 });
    };

    // The first MCP request has no token: the challenge starts discovery.
    const refused = await f.auth.verifyBearer(new Request(`${BASE}/mcp`, { method: "POST" }));
    assert.equal(refused.ok, false);
    if (refused.ok) return;
    const { resourceMetadataUrl, scope } = extractWWWAuthenticateParams(refused.response);
    assert.equal(resourceMetadataUrl?.href, `${BASE}/.well-known/oauth-protected-resource/mcp`);
    assert.equal(scope, "shell:read shell:execute");

    const provider = new MemoryProvider();
    const first = await sdkAuth(provider, {
      serverUrl: `${BASE}/mcp`,
      ...(resourceMetadataUrl !== undefined ? { resourceMetadataUrl } : {}),
      ...(scope !== undefined ? { scope } : {}),
      fetchFn,
    });
    assert.equal(first, "REDIRECT");
    const url = provider.authorizationUrl;
    assert.ok(url !== null);
    assert.equal(url.searchParams.get("resource"), RESOURCE);
    assert.equal(url.searchParams.get("code_challenge_method"), "S256");
    assert.equal(url.searchParams.get("scope"), "shell:read shell:execute");

    // The operator opens the page and approves with the PIN.
    const page = await call(f.auth, new Request(url));
    assert.equal(page.status, 200);
    const approved = await call(
      f.auth,
      new Request(`${BASE}/authorize`, {
        method: "POST",
        headers: { "content-type": "application/x-www-form-urlencoded" },
        body: new URLSearchParams({ ...formOf(await page.text()), pin: PIN }).toString(),
      }),
    );
    const callback = new URL(approved.headers.get("location") ?? "");
    assert.equal(callback.searchParams.get("state"), "sdk-state-1");
    assert.equal(callback.searchParams.get("iss"), BASE);

    const second = await sdkAuth(provider, {
      serverUrl: `${BASE}/mcp`,
      authorizationCode: callback.searchParams.get("code") ?? "",
      ...(resourceMetadataUrl !== undefined ? { resourceMetadataUrl } : {}),
      fetchFn,
    });
    assert.equal(second, "AUTHORIZED");
    const token = provider.saved?.access_token ?? "";
    assert.equal(provider.saved?.refresh_token, undefined);
    const verified = await f.auth.verifyBearer(
      new Request(`${BASE}/mcp`, { method: "POST", headers: { authorization: `Bearer ${token}` } }),
    );
    assert.ok(verified.ok);
    assert.deepEqual([...verified.scopes], ["shell:read", "shell:execute"]);
    assert.ok(requested.includes("GET /.well-known/oauth-protected-resource/mcp"));
    assert.ok(requested.includes("GET /.well-known/oauth-authorization-server"));
    assert.ok(requested.includes("POST /register"));
    assert.ok(requested.includes("POST /token"));
  });
});
