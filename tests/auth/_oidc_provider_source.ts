/**
 * The source of the OpenID provider the external-mode tests run under Node
 * (npm `oidc-provider`). Kept as text, written next to its `node_modules` at
 * run time: it is a Node program, not a Deno module, and must not be type
 * checked against Deno's import map.
 */
export const OIDC_PROVIDER_SOURCE =
  `// A real OpenID provider for the external-mode tests: npm \`oidc-provider\`
// (a certified implementation) under Node, on 127.0.0.1, issuing RFC 9068
// JWT access tokens for resource indicators by client credentials.
//
// Input (env OIDC_TEST_CONFIG, JSON): { jwks: { keys: [private JWK] } }.
// Output: one line on stdout, {"issuer": "..."}, once listening.
// GET /test/jwks-hits answers how often the key set was fetched.
import http from "node:http";
import Provider, { errors } from "oidc-provider";

const config = JSON.parse(process.env.OIDC_TEST_CONFIG ?? "{}");
const SCOPES = "shell:read shell:execute";
// Which groups each client's tokens carry: the claim htmcp picks a profile by.
const GROUPS = {
  builder: ["builders", "staff"],
  reader: ["readers"],
  stranger: ["visitors"],
};
// An indicator for opaque tokens whose audience is still htmcp's resource.
const OPAQUE_PREFIX = "urn:htmcp-test:opaque:";

let jwksHits = 0;
const server = http.createServer();
server.listen(0, "127.0.0.1", () => {
  const { port } = server.address();
  const issuer = \`http://127.0.0.1:\${port}\`;
  const client = (id) => ({
    client_id: id,
    client_secret: \`\${id}-secret-0123456789abcdef\`,
    grant_types: ["client_credentials"],
    redirect_uris: [],
    response_types: [],
    scope: SCOPES,
    // The only key is ES256; the RS256 default would not validate.
    id_token_signed_response_alg: "ES256",
  });
  const provider = new Provider(issuer, {
    clients: [client("builder"), client("reader"), client("stranger"), client("introspector")],
    jwks: config.jwks,
    scopes: SCOPES.split(" "),
    cookies: { keys: ["test-cookie-key-0123456789"] },
    // Registered clients sign nothing with RS256: the only key is ES256.
    clientDefaults: { id_token_signed_response_alg: "ES256" },
    features: {
      // The built-in login and consent pages: the tests submit them as a user would.
      devInteractions: { enabled: true },
      // Dynamic registration of public clients, as the MCP SDK client does it.
      registration: { enabled: true },
      clientCredentials: { enabled: true },
      introspection: { enabled: true },
      resourceIndicators: {
        enabled: true,
        useGrantedResource: () => true,
        getResourceServerInfo(_ctx, indicator) {
          const opaque = indicator.startsWith(OPAQUE_PREFIX);
          const audience = opaque ? indicator.slice(OPAQUE_PREFIX.length) : indicator;
          if (!/^(http:\\/\\/127\\.0\\.0\\.1:\\d+|https:\\/\\/other\\.example)\\/mcp$/.test(audience)) {
            throw new errors.InvalidTarget();
          }
          return {
            scope: SCOPES,
            audience,
            accessTokenTTL: 300,
            accessTokenFormat: opaque ? "opaque" : "jwt",
            jwt: { sign: { alg: "ES256" } },
          };
        },
      },
    },
    extraTokenClaims(_ctx, token) {
      // A signed-in user's groups come from their account, a client's from its id.
      return { groups: GROUPS[token.accountId ?? token.clientId] ?? [] };
    },
  });
  const callback = provider.callback();
  server.on("request", (req, res) => {
    if (req.url === "/test/jwks-hits") {
      res.writeHead(200, { "content-type": "application/json" });
      res.end(JSON.stringify({ hits: jwksHits }));
      return;
    }
    if (req.url === "/jwks") jwksHits++;
    callback(req, res);
  });
  process.stdout.write(\`\${JSON.stringify({ issuer })}\\n\`);
});
`;
