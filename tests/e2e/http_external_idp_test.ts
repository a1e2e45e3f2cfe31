/**
 * `[auth] mode = "external"` end to end with real parts: a real OpenID
 * provider (npm `oidc-provider` under Node) on 127.0.0.1 issues RFC 9068 JWT
 * access tokens for resource indicators by client credentials; the real CLI
 * (`htmcp serve --http`, under its generated permission set) accepts them for
 * tool calls through the real SDK client, and refuses every bad token with
 * the exact status and reason, audited, before anything runs.
 */
import { prepareJail } from "../_helpers/jail.ts";
import assert from "node:assert/strict";
import { join } from "node:path";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { generateKeyPair, SignJWT } from "jose";
import { type CliServer, startCliServer } from "../../scripts/conformance.ts";
import { type OidcProvider, signInAtProvider, startOidcProvider } from "../auth/_oidc.ts";
import { UnauthorizedError } from "@modelcontextprotocol/sdk/client/auth.js";
import { RecordingProvider, REDIRECT_URI } from "../transport/http/_oauth.ts";

interface World {
  readonly provider: OidcProvider;
  readonly server: CliServer;
  /** The `/mcp` URL, which is also the canonical resource (the default audience). */
  readonly resource: string;
  readonly dir: string;
  readonly canary: string;
  records(): Promise<Record<string, unknown>[]>;
}

async function withWorld(body: (w: World) => Promise<void>): Promise<void> {
  const dir = await Deno.realPath(await Deno.makeTempDir({ prefix: "htmcp-external-" }));
  const provider = await startOidcProvider();
  let server: CliServer | null = null;
  try {
    await Deno.mkdir(join(dir, "jail"));
    // Commands run in the kernel sandbox as the jail's owner: hand the jail to it.
    await prepareJail(join(dir, "jail"));
    await Deno.writeTextFile(
      join(dir, "introspection.secret"),
      "introspector-secret-0123456789abcdef\n",
    );
    await Deno.writeTextFile(
      join(dir, "policy.toml"),
      `jail_root = "jail"
audit_log = "audit.jsonl"

[allowlist]
commands = ["echo", "touch"]

[auth]
mode = "external"
issuer = "${provider.issuer}"
introspection_endpoint = "${provider.introspectionEndpoint}"
introspection_client_id = "introspector"
introspection_secret_file = "introspection.secret"

[auth.profiles]
claim = "groups"
scopes = { builders = ["shell:read", "shell:execute"], readers = ["shell:read"] }
`,
    );
    server = await startCliServer(join(dir, "policy.toml"));
    const records = async () =>
      (await Deno.readTextFile(join(dir, "audit.jsonl"))).split("\n").filter((l) => l !== "")
        .map((l) => JSON.parse(l));
    await body({
      provider,
      server,
      resource: server.url,
      dir,
      canary: join(dir, "jail", "canary"),
      records,
    });
  } finally {
    if (server !== null) {
      server.child.kill("SIGTERM");
      await server.child.status;
    }
    await provider.stop();
    await Deno.remove(dir, { recursive: true });
  }
}

async function connect(url: string, token: string): Promise<Client> {
  const client = new Client({ name: "external-idp-e2e", version: "0" });
  await client.connect(
    new StreamableHTTPClientTransport(new URL(url), {
      requestInit: { headers: { authorization: `Bearer ${token}` } },
    }),
  );
  return client;
}

/** A tools/call that would create the canary, sent with `token`. */
async function attempt(w: World, token: string): Promise<Response> {
  return await fetch(w.resource, {
    method: "POST",
    headers: {
      authorization: `Bearer ${token}`,
      "content-type": "application/json",
      accept: "application/json, text/event-stream",
    },
    body: JSON.stringify({
      jsonrpc: "2.0",
      id: 1,
      method: "tools/call",
      params: { name: "run_command", arguments: { command: "touch canary" } },
    }),
  });
}

/**
 * Asserts the refusal, that it is audited with `reason`, and that nothing ran.
 * A repeat of a reason already written from the same address in this minute
 * is counted into one `refusals_aggregated` record instead (`repeat`).
 */
async function assertRefused(
  w: World,
  token: string,
  status: number,
  error: string,
  reason: string,
  repeat = false,
): Promise<void> {
  const before = (await w.records()).length;
  const response = await attempt(w, token);
  const body = await response.json();
  assert.equal(response.status, status, JSON.stringify(body));
  assert.equal(body.error, error);
  const added = (await w.records()).slice(before);
  assert.deepEqual(
    added.map((r) => [r.event, r.reason]),
    repeat ? [] : [["bearer_invalid", reason]],
  );
  assert.ok(!added.some((r) => r.kind === "attempt"), "no command attempt was recorded");
  await assert.rejects(Deno.lstat(w.canary), Deno.errors.NotFound);
}

function claims(w: World, overrides: Record<string, unknown> = {}): Record<string, unknown> {
  const now = Math.floor(Date.now() / 1000);
  return {
    iss: w.provider.issuer,
    aud: w.resource,
    sub: "builder",
    client_id: "builder",
    groups: ["builders"],
    scope: "shell:read shell:execute",
    jti: crypto.randomUUID(),
    iat: now,
    exp: now + 300,
    ...overrides,
  };
}

Deno.test("external mode: the metadata names the provider and the built-in issuing endpoints are not mounted", async () => {
  await withWorld(async (w) => {
    const origin = new URL(w.resource).origin;
    const metadata = await (await fetch(`${origin}/.well-known/oauth-protected-resource/mcp`))
      .json();
    assert.deepEqual(metadata.authorization_servers, [w.provider.issuer]);
    assert.equal(metadata.resource, w.resource);
    for (const path of ["/.well-known/oauth-authorization-server", "/authorize", "/token"]) {
      const response = await fetch(`${origin}${path}`);
      await response.body?.cancel();
      assert.equal(response.status, 404, path);
    }
    const response = await fetch(`${origin}/register`, { method: "POST", body: "{}" });
    await response.body?.cancel();
    assert.equal(response.status, 404);
  });
});

Deno.test("external mode: a provider JWT for this resource runs a tool; a reader's profile narrows it to shell:read", async () => {
  await withWorld(async (w) => {
    const builder = await connect(w.resource, await w.provider.token("builder", w.resource));
    try {
      const ran = await builder.callTool({
        name: "run_command",
        arguments: { command: "echo hi" },
      });
      assert.equal((ran.structuredContent as { code: string }).code, "OK");
      assert.equal((ran.structuredContent as { stdout: string }).stdout, "hi\n");
    } finally {
      await builder.close();
    }
    const calls = await w.records();
    assert.ok(calls.some((r) => r.event === "tool_call" && r.client_id === "builder"));

    // The reader's token carries both scopes; its profile grants only shell:read.
    const reader = await connect(w.resource, await w.provider.token("reader", w.resource));
    try {
      const described = await reader.callTool({ name: "describe_policy", arguments: {} });
      assert.notEqual(described.isError, true);
      await assert.rejects(
        reader.callTool({ name: "run_command", arguments: { command: "touch canary" } }),
        /403|insufficient_scope/,
      );
    } finally {
      await reader.close();
    }
    await assert.rejects(Deno.lstat(w.canary), Deno.errors.NotFound);
  });
});

Deno.test("external mode: an opaque token is accepted through introspection; an unknown one is inactive", async () => {
  await withWorld(async (w) => {
    const opaque = await w.provider.token("builder", `urn:htmcp-test:opaque:${w.resource}`);
    assert.ok(!opaque.includes("."), "the provider issued an opaque token");
    const client = await connect(w.resource, opaque);
    try {
      const ran = await client.callTool({ name: "run_command", arguments: { command: "echo op" } });
      assert.equal((ran.structuredContent as { stdout: string }).stdout, "op\n");
    } finally {
      await client.close();
    }
    await assertRefused(
      w,
      "NotAnIssuedToken0123456789abcdefghij",
      401,
      "invalid_token",
      "token_inactive",
    );
  });
});

Deno.test("external mode: refuses another audience, another issuer, expiry, nbf, typ, alg none, HS256 and no profile", async () => {
  await withWorld(async (w) => {
    const otherAudience = await w.provider.token("builder", "https://other.example/mcp");
    await assertRefused(w, otherAudience, 401, "invalid_token", "wrong_audience");
    await assertRefused(
      w,
      await w.provider.sign(claims(w, { iss: "http://127.0.0.1:1" })),
      401,
      "invalid_token",
      "wrong_issuer",
    );
    const past = Math.floor(Date.now() / 1000) - 3600;
    await assertRefused(
      w,
      await w.provider.sign(claims(w, { iat: past - 300, exp: past })),
      401,
      "invalid_token",
      "expired",
    );
    await assertRefused(
      w,
      await w.provider.sign(claims(w, { nbf: Math.floor(Date.now() / 1000) + 3600 })),
      401,
      "invalid_token",
      "bad_claims",
    );
    // An ID token or any other JWT is not an access token (RFC 9068 §2.1).
    const idToken = await new SignJWT(claims(w)).setProtectedHeader({
      alg: "ES256",
      typ: "JWT",
      kid: w.provider.kid,
    }).sign(w.provider.privateKey);
    await assertRefused(w, idToken, 401, "invalid_token", "wrong_type");
    const b64 = (value: unknown) =>
      btoa(JSON.stringify(value)).replaceAll("+", "-").replaceAll("/", "_").replace(/=+$/, "");
    const none = `${b64({ alg: "none", typ: "at+jwt" })}.${b64(claims(w))}.`;
    await assertRefused(w, none, 401, "invalid_token", "wrong_algorithm");
    const hs256 = await new SignJWT(claims(w)).setProtectedHeader({ alg: "HS256", typ: "at+jwt" })
      .sign(new TextEncoder().encode("a-shared-secret-nobody-configured"));
    await assertRefused(w, hs256, 401, "invalid_token", "wrong_algorithm", true);

    const stranger = await w.provider.token("stranger", w.resource);
    const before = (await w.records()).length;
    await assertRefused(w, stranger, 403, "access_denied", "no_profile");
    const refusal = (await w.records()).slice(before)[0];
    assert.equal(refusal?.client_id, "stranger");
  });
});

Deno.test("external mode: a flood of tokens with an unknown kid causes at most one key-set fetch", async () => {
  await withWorld(async (w) => {
    // One good call loads the key set.
    const good = await attempt(w, await w.provider.token("builder", w.resource));
    await good.body?.cancel();
    const loaded = await w.provider.jwksHits();
    assert.ok(loaded >= 1, "the key set was fetched for the good token");

    const { privateKey } = await generateKeyPair("ES256");
    const forged = await new SignJWT(claims(w)).setProtectedHeader({
      alg: "ES256",
      typ: "at+jwt",
      kid: "rotated-unknown",
    }).sign(privateKey);
    const statuses: number[] = [];
    // Bounded: 3 waves of 20 concurrent requests.
    for (let wave = 0; wave < 3; wave++) {
      const responses = await Promise.all(
        Array.from({ length: 20 }, () => attempt(w, forged)),
      );
      for (const response of responses) {
        statuses.push(response.status);
        await response.body?.cancel();
      }
    }
    assert.deepEqual(new Set(statuses), new Set([401]));
    const extra = (await w.provider.jwksHits()) - loaded;
    assert.ok(extra <= 1, `the unknown kid caused ${extra} key-set fetches`);
    const reasons = (await w.records()).filter((r) => r.event === "bearer_invalid").map((r) =>
      r.reason
    );
    // The first is written; the other 59 from this address are counted into
    // one refusals_aggregated record (bounded audit space before authentication).
    assert.equal(reasons.length, 1);
    assert.deepEqual(new Set(reasons), new Set(["bad_signature"]));
    await assert.rejects(Deno.lstat(w.canary), Deno.errors.NotFound);
  });
});

Deno.test("external mode: the SDK client's own OAuth flow (discovery, registration, PKCE, resource) completes at the provider and calls a tool", async () => {
  await withWorld(async (w) => {
    const url = new URL(w.resource);
    const provider = new RecordingProvider();
    const first = new StreamableHTTPClientTransport(url, { authProvider: provider });
    const probe = new Client({ name: "external-idp-sdk", version: "0" });
    await assert.rejects(probe.connect(first), UnauthorizedError);
    await probe.close();
    const authorizationUrl = provider.authorizationUrl as URL;
    // The SDK found the provider through our metadata, and asks for our resource.
    assert.equal(authorizationUrl.origin, w.provider.issuer);
    assert.equal(authorizationUrl.searchParams.get("resource"), w.resource);
    assert.equal(authorizationUrl.searchParams.get("code_challenge_method"), "S256");
    const code = await signInAtProvider(authorizationUrl, "builder", REDIRECT_URI);
    await first.finishAuth(code);
    const client = new Client({ name: "external-idp-sdk", version: "0" });
    await client.connect(new StreamableHTTPClientTransport(url, { authProvider: provider }));
    try {
      const ran = await client.callTool({
        name: "run_command",
        arguments: { command: "echo sdk" },
      });
      assert.equal((ran.structuredContent as { stdout: string }).stdout, "sdk\n");
    } finally {
      await client.close();
    }
    const calls = (await w.records()).filter((r) => r.event === "tool_call");
    assert.deepEqual(calls.map((r) => r.client_id), ["builder"]);
  });
});
