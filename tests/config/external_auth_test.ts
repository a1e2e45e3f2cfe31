/**
 * `[auth] mode = "external"`: the provider keys are read and normalised, and
 * each bad key stops the load with one sentence naming it.
 */
import assert from "node:assert/strict";
import { assertLoaded, assertRefused, MINIMAL, withScratch } from "./_fixture.ts";

const EXTERNAL = MINIMAL +
  '[auth]\nmode = "external"\nissuer = "https://id.example.com/realms/x"\n';

Deno.test("loadPolicy() reads the external provider keys with their defaults", async () => {
  await withScratch(async (s) => {
    const policy = assertLoaded(await s.load(EXTERNAL));
    assert.deepEqual(policy.auth.external, {
      issuer: "https://id.example.com/realms/x",
      audience: null,
      jwksUri: null,
      algorithms: ["RS256", "PS256", "ES256", "EdDSA"],
      jwksCooldownSeconds: 30,
      scopeClaim: null,
      introspection: null,
      profiles: null,
    });
  });
});

Deno.test("loadPolicy() reads introspection and profiles, the secret file outside the jail", async () => {
  await withScratch(async (s) => {
    await s.write("secrets/introspect", "s3cret\n");
    const policy = assertLoaded(
      await s.load(
        EXTERNAL +
          'audience = "https://mcp.example.com/mcp"\njwks_uri = "https://id.example.com/keys"\n' +
          'algorithms = ["ES256"]\njwks_cooldown_seconds = 60\nscope_claim = "scp"\n' +
          'introspection_endpoint = "https://id.example.com/introspect"\n' +
          'introspection_client_id = "htmcp"\nintrospection_secret_file = "secrets/introspect"\n' +
          '[auth.profiles]\nclaim = "groups"\nscopes = { readers = ["shell:read"] }\n',
      ),
    );
    const external = policy.auth.external;
    assert.equal(external?.audience, "https://mcp.example.com/mcp");
    assert.equal(external?.jwksUri, "https://id.example.com/keys");
    assert.deepEqual(external?.algorithms, ["ES256"]);
    assert.equal(external?.jwksCooldownSeconds, 60);
    assert.equal(external?.scopeClaim, "scp");
    assert.deepEqual(external?.introspection, {
      endpoint: "https://id.example.com/introspect",
      clientId: "htmcp",
      secretFile: `${s.dir}/secrets/introspect`,
      cacheSeconds: 60,
    });
    assert.equal(external?.profiles?.claim, "groups");
    assert.deepEqual([...external?.profiles?.scopes ?? []], [["readers", ["shell:read"]]]);
  });
});

Deno.test("loadPolicy() refuses each bad external key with one sentence", async () => {
  await withScratch(async (s) => {
    await s.write("jail/secret", "s3cret");
    const cases: [string, string][] = [
      [
        MINIMAL + '[auth]\nmode = "external"\n',
        'Policy key "auth.issuer" is required with auth.mode = "external".',
      ],
      [
        MINIMAL + '[auth]\nissuer = "https://id.example.com"\n',
        'Policy key "auth.issuer" is only used with auth.mode = "external", but auth.mode is "oauth".',
      ],
      [
        MINIMAL + '[auth]\nmode = "external"\nissuer = "http://id.example.com"\n',
        'Policy key "auth.issuer" is "http://id.example.com", but it must use https (plain http only for a loopback host).',
      ],
      [
        EXTERNAL + 'algorithms = ["none"]\n',
        'Policy key "auth.algorithms[1]" is "none", which is not an asymmetric JWS algorithm (none and HS* are never accepted).',
      ],
      [
        EXTERNAL + 'algorithms = ["ES256", "HS256"]\n',
        'Policy key "auth.algorithms[2]" is "HS256", which is not an asymmetric JWS algorithm (none and HS* are never accepted).',
      ],
      [
        EXTERNAL + 'jwks_uri = "ftp://id.example.com/keys"\n',
        'Policy key "auth.jwks_uri" is "ftp://id.example.com/keys", but it must use https.',
      ],
      [
        EXTERNAL + 'introspection_endpoint = "https://id.example.com/i"\n',
        'Policy key "auth.introspection_client_id" is missing; introspection needs it.',
      ],
      [
        EXTERNAL + 'introspection_endpoint = "https://id.example.com/i"\n' +
        'introspection_client_id = "c"\nintrospection_secret_file = "jail/secret"\n',
        `Policy key "auth.introspection_secret_file" names "${s.dir}/jail/secret", which is inside the jail root, where the model could read or replace it.`,
      ],
      [
        EXTERNAL + '[auth.profiles]\nclaim = "groups"\nscopes = { admins = ["shell:admin"] }\n',
        'Policy key "auth.profiles.scopes.admins[1]" is "shell:admin", which is not a scope of this server ("shell:read", "shell:execute", "audit:read", "audit:full").',
      ],
      [
        EXTERNAL + '[auth.profiles]\nclaim = "groups"\nscopes = {}\n',
        'Policy key "auth.profiles.scopes" lists no claim value, so every principal would be refused.',
      ],
    ];
    for (const [toml, message] of cases) assertRefused(await s.load(toml), message);
  });
});

Deno.test("loadPolicy() reads client_id_metadata_allow and refuses entries it cannot grant", async () => {
  await withScratch(async (s) => {
    const policy = assertLoaded(
      await s.load(
        MINIMAL +
          '[auth]\nclient_id_metadata_allow = ["https://app.example.com/oauth/client.json", "tools.example.org"]\n',
      ),
    );
    assert.deepEqual(policy.auth.clientIdMetadataAllow, [
      "https://app.example.com/oauth/client.json",
      "tools.example.org",
    ]);
    const cases: [string, string][] = [
      [
        'client_id_metadata_allow = ["*.example.org"]',
        'Policy key "auth.client_id_metadata_allow[1]" is "*.example.org", which is neither a client-id URL nor a lower-case host name.',
      ],
      [
        'client_id_metadata_allow = ["http://app.example.com/client.json"]',
        'Policy key "auth.client_id_metadata_allow[1]" is "http://app.example.com/client.json", but it must use https (plain http only for a loopback host).',
      ],
      [
        'client_id_metadata_allow = ["https://app.example.com/"]',
        'Policy key "auth.client_id_metadata_allow[1]" is "https://app.example.com/", but a client-id URL must be written in its normal form and have a path.',
      ],
      [
        'mode = "external"\nissuer = "https://id.example.com"\nclient_id_metadata_allow = ["a.example"]',
        'Policy key "auth.client_id_metadata_allow" is used only by the built-in authorization server (auth.mode = "oauth"), but auth.mode is "external".',
      ],
    ];
    for (const [toml, message] of cases) {
      assertRefused(await s.load(`${MINIMAL}[auth]\n${toml}\n`), message);
    }
  });
});
