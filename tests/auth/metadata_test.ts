/**
 * Discovery: RFC 8414 and RFC 9728 documents at every path MCP clients try,
 * checked against the MCP SDK's own schemas (what the real client parses).
 */
import assert from "node:assert/strict";
import {
  OAuthMetadataSchema,
  OAuthProtectedResourceMetadataSchema,
} from "@modelcontextprotocol/sdk/shared/auth.js";
import { BASE, call, makeAuth, RESOURCE, withAuth } from "./_fixtures.ts";

const AS_PATHS = [
  "/.well-known/oauth-authorization-server",
  "/.well-known/openid-configuration",
  "/.well-known/oauth-authorization-server/mcp",
  "/.well-known/openid-configuration/mcp",
  "/mcp/.well-known/openid-configuration",
];

Deno.test("authorization server metadata is served at the RFC 8414 and OpenID paths", async () => {
  await withAuth({}, async (f) => {
    for (const path of AS_PATHS) {
      const response = await call(f.auth, new Request(`${BASE}${path}`));
      assert.equal(response.status, 200, path);
      assert.equal(response.headers.get("content-type"), "application/json");
      assert.equal(response.headers.get("access-control-allow-origin"), "*");
      const doc = await response.json();
      assert.ok(OAuthMetadataSchema.safeParse(doc).success, path);
      assert.deepEqual(doc, {
        issuer: BASE,
        authorization_endpoint: `${BASE}/authorize`,
        token_endpoint: `${BASE}/token`,
        registration_endpoint: `${BASE}/register`,
        scopes_supported: ["shell:read", "shell:execute", "audit:read", "audit:full"],
        response_types_supported: ["code"],
        response_modes_supported: ["query"],
        grant_types_supported: ["authorization_code"],
        token_endpoint_auth_methods_supported: ["none"],
        code_challenge_methods_supported: ["S256"],
        authorization_response_iss_parameter_supported: true,
      });
    }
  });
});

Deno.test("metadata advertises plain PKCE only when the operator allows it", async () => {
  const f = await makeAuth({
    policyOverrides: {
      auth: {
        mode: "oauth",
        allowLocalhostBypass: false,
        allowPlainPkce: true,
        accessTokenTtlSeconds: 60,
        clientIdMetadataAllow: [],
        external: null,
      },
    },
  });
  try {
    const doc = await (await call(f.auth, new Request(`${BASE}${AS_PATHS[0]}`))).json();
    assert.deepEqual(doc.code_challenge_methods_supported, ["S256", "plain"]);
  } finally {
    await f.close();
  }
});

Deno.test("protected resource metadata names the /mcp resource and this issuer at both paths", async () => {
  await withAuth({}, async (f) => {
    for (
      const path of [
        "/.well-known/oauth-protected-resource/mcp",
        "/.well-known/oauth-protected-resource",
      ]
    ) {
      const response = await call(f.auth, new Request(`${BASE}${path}`));
      assert.equal(response.status, 200);
      const doc = await response.json();
      assert.ok(OAuthProtectedResourceMetadataSchema.safeParse(doc).success);
      assert.equal(doc.resource, RESOURCE);
      assert.deepEqual(doc.authorization_servers, [BASE]);
      assert.deepEqual(doc.scopes_supported, [
        "shell:read",
        "shell:execute",
        "audit:read",
        "audit:full",
      ]);
      assert.deepEqual(doc.bearer_methods_supported, ["header"]);
    }
    assert.equal(f.auth.settings.issuer, BASE);
    assert.equal(f.auth.settings.resource, RESOURCE);
  });
});

Deno.test("CORS preflight is answered on public endpoints but not on /authorize", async () => {
  await withAuth({}, async (f) => {
    for (const path of ["/register", "/token", AS_PATHS[0] as string]) {
      const response = await call(f.auth, new Request(`${BASE}${path}`, { method: "OPTIONS" }));
      assert.equal(response.status, 204, path);
      assert.equal(response.headers.get("access-control-allow-origin"), "*");
    }
    const authorize = await call(f.auth, new Request(`${BASE}/authorize`, { method: "OPTIONS" }));
    assert.equal(authorize.status, 405);
    assert.equal(authorize.headers.get("access-control-allow-origin"), null);
    await authorize.body?.cancel();
  });
});

Deno.test("createAuthorizationServer() derives issuer and resource from an https base URL", async () => {
  const f = await makeAuth({ baseUrl: "https://mcp.example.com:443" });
  try {
    assert.equal(f.auth.settings.issuer, "https://mcp.example.com");
    assert.equal(f.auth.settings.resource, "https://mcp.example.com/mcp");
    assert.equal(
      f.auth.protectedResourceMetadataUrl,
      "https://mcp.example.com/.well-known/oauth-protected-resource/mcp",
    );
  } finally {
    await f.close();
  }
});

Deno.test("createAuthorizationServer() refuses base URLs it cannot defend", async () => {
  const cases: [string, RegExp][] = [
    ["http://mcp.example.com", /plain http on a non-loopback host/],
    ["http://192.0.2.7:8080", /plain http on a non-loopback host/],
    ["https://mcp.example.com/prefix", /origin only/],
    ["https://mcp.example.com/?x=1", /origin only/],
    ["https://mcp.example.com/#x", /origin only/],
    ["https://user:pw@mcp.example.com", /user name/],
    ["ftp://mcp.example.com", /must use https/],
    ["not a url", /not a valid URL/],
  ];
  for (const [baseUrl, message] of cases) {
    await assert.rejects(makeAuth({ baseUrl }), message, baseUrl);
  }
  // Loopback http is fine: it never leaves the machine.
  for (const baseUrl of ["http://localhost:9000", "http://[::1]:9000", "http://127.0.0.1:9000"]) {
    const f = await makeAuth({ baseUrl });
    await f.close();
  }
});
