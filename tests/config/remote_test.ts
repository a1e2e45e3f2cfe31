/**
 * `[http]` and `[auth]`: addresses normalised once, TLS files outside the
 * jail, `auth.mode = "none"` only on loopback, the token TTL from the
 * environment.
 */
import assert from "node:assert/strict";
import { assertLoaded, assertRefused, MINIMAL, withScratch } from "./_fixture.ts";

Deno.test("loadPolicy() applies the [http] and [auth] defaults", async () => {
  await withScratch(async (s) => {
    const policy = assertLoaded(await s.load(MINIMAL));
    assert.deepEqual(policy.http, {
      listen: null,
      baseUrl: null,
      tlsCert: null,
      tlsKey: null,
      allowedOrigins: [],
      allowedHosts: [],
      maxRequestBytes: 16_000_000,
      maxRegistrationBytes: 16_384,
      maxConcurrentPerClient: 2,
      maxConnections: 0,
      headerTimeoutMs: 10_000,
      idleTimeoutMs: 120_000,
    });
    assert.deepEqual(policy.auth, {
      mode: "oauth",
      allowLocalhostBypass: false,
      allowPlainPkce: false,
      accessTokenTtlSeconds: 3600,
      clientIdMetadataAllow: [],
      external: null,
    });
  });
});

Deno.test("loadPolicy() reads and normalises every [http] key", async () => {
  await withScratch(async (s) => {
    await s.write("tls/cert.pem", "cert");
    await s.write("tls/key.pem", "key");
    const policy = assertLoaded(
      await s.load(
        MINIMAL + "[http]\n" +
          'listen = "LocalHost:08080"\n' +
          'base_url = "https://MCP.Example.com/"\n' +
          'tls_cert = "tls/cert.pem"\n' +
          'tls_key = "tls/key.pem"\n' +
          'allowed_origins = ["https://App.Example.com", "http://localhost:3000/"]\n' +
          'allowed_hosts = ["MCP.example.com", "127.0.0.1:8080", "[::1]:8080"]\n' +
          "max_http_request_bytes = 0\nmax_registration_bytes = 4096\nmax_concurrent_per_client = 8\n" +
          "max_connections = 300\nheader_timeout_ms = 5000\nidle_timeout_ms = 60000\n",
      ),
    );
    assert.deepEqual(policy.http, {
      listen: "localhost:8080",
      baseUrl: "https://mcp.example.com",
      tlsCert: `${s.dir}/tls/cert.pem`,
      tlsKey: `${s.dir}/tls/key.pem`,
      allowedOrigins: ["https://app.example.com", "http://localhost:3000"],
      allowedHosts: ["mcp.example.com", "127.0.0.1:8080", "[::1]:8080"],
      maxRequestBytes: 0,
      maxRegistrationBytes: 4096,
      maxConcurrentPerClient: 8,
      maxConnections: 300,
      headerTimeoutMs: 5_000,
      idleTimeoutMs: 60_000,
    });
  });
});

Deno.test("loadPolicy() lets --http and HTMCP_BASE_URL override the file", async () => {
  await withScratch(async (s) => {
    const policy = assertLoaded(
      await s.load(
        MINIMAL + '[http]\nlisten = "127.0.0.1:1"\nbase_url = "https://a.example.com"\n',
        { HTMCP_BASE_URL: "https://b.example.com" },
        "[::1]:0",
      ),
    );
    assert.equal(policy.http.listen, "[::1]:0");
    assert.equal(policy.http.baseUrl, "https://b.example.com");
  });
});

for (
  const listen of ["127.0.0.1", "localhost:99999", "::1:8080", "exa mple:80", "host:-1", ":8080"]
) {
  Deno.test(`loadPolicy() refuses the listen address ${JSON.stringify(listen)}`, async () => {
    await withScratch(async (s) => {
      assertRefused(
        await s.load(`${MINIMAL}[http]\nlisten = ${JSON.stringify(listen)}\n`),
        `Policy key "http.listen" is ${
          JSON.stringify(listen)
        }, but it must be HOST:PORT (for example "127.0.0.1:8080" or "[::1]:8080").`,
      );
    });
  });
}

Deno.test("loadPolicy() refuses a bad --http override and names it", async () => {
  await withScratch(async (s) => {
    assertRefused(
      await s.load(MINIMAL, {}, "0.0.0.0"),
      'Policy key "http.listen" (from --http) is "0.0.0.0", but it must be HOST:PORT (for example "127.0.0.1:8080" or "[::1]:8080").',
    );
  });
});

Deno.test("loadPolicy() refuses a plain-http base_url for a public host", async () => {
  await withScratch(async (s) => {
    assertRefused(
      await s.load(MINIMAL + '[http]\nbase_url = "http://mcp.example.com"\n'),
      'Policy key "http.base_url" is "http://mcp.example.com", but an external base URL must use https (plain http only for a loopback host).',
    );
    assert.equal(
      assertLoaded(await s.load(MINIMAL + '[http]\nbase_url = "http://127.0.0.1:8080"\n')).http
        .baseUrl,
      "http://127.0.0.1:8080",
    );
  });
});

Deno.test("loadPolicy() refuses a base_url with a path, query or credentials", async () => {
  await withScratch(async (s) => {
    for (
      const url of [
        "https://mcp.example.com/mcp",
        "https://u:p@mcp.example.com",
        "https://x.com/?a=1",
      ]
    ) {
      assertRefused(
        await s.load(MINIMAL, { HTMCP_BASE_URL: url }),
        `Policy key "http.base_url" (from HTMCP_BASE_URL) is ${
          JSON.stringify(url)
        }, but it must be an http(s) origin with no path, query or credentials, such as "https://mcp.example.com".`,
      );
    }
    assertRefused(
      await s.load(MINIMAL, { HTMCP_BASE_URL: "mcp.example.com" }),
      'Policy key "http.base_url" (from HTMCP_BASE_URL) is "mcp.example.com", which is not a URL such as "https://mcp.example.com".',
    );
  });
});

Deno.test("loadPolicy() refuses a bad allowed origin or host", async () => {
  await withScratch(async (s) => {
    assertRefused(
      await s.load(MINIMAL + '[http]\nallowed_origins = ["https://ok.example.com", "null"]\n'),
      'Policy key "http.allowed_origins[2]" is "null", which is not a URL such as "https://mcp.example.com".',
    );
    assertRefused(
      await s.load(MINIMAL + '[http]\nallowed_hosts = ["evil.com/x"]\n'),
      'Policy key "http.allowed_hosts[1]" is "evil.com/x", but it must be a host name or address, optionally with ":PORT".',
    );
  });
});

Deno.test("loadPolicy() refuses a TLS certificate without a key", async () => {
  await withScratch(async (s) => {
    await s.write("cert.pem", "c");
    assertRefused(
      await s.load(MINIMAL + '[http]\ntls_cert = "cert.pem"\n'),
      'Policy key "http.tls_key" is missing; TLS needs both http.tls_cert and http.tls_key.',
    );
  });
});

Deno.test("loadPolicy() refuses a TLS file that does not exist", async () => {
  await withScratch(async (s) => {
    await s.write("cert.pem", "c");
    assertRefused(
      await s.load(MINIMAL + '[http]\ntls_cert = "cert.pem"\ntls_key = "key.pem"\n'),
      `Policy key "http.tls_key" names "${s.dir}/key.pem", which cannot be used: it does not exist.`,
    );
  });
});

Deno.test("loadPolicy() refuses a TLS private key inside the jail", async () => {
  await withScratch(async (s) => {
    await s.write("cert.pem", "c");
    await s.write("jail/key.pem", "k");
    assertRefused(
      await s.load(MINIMAL + '[http]\ntls_cert = "cert.pem"\ntls_key = "jail/key.pem"\n'),
      `Policy key "http.tls_key" names "${s.jail}/key.pem", which is inside the jail root, where the model could read or replace it.`,
    );
  });
});

Deno.test("loadPolicy() refuses auth.mode none on a non-loopback listen address", async () => {
  await withScratch(async (s) => {
    assertRefused(
      await s.load(MINIMAL + '[http]\nlisten = "0.0.0.0:8080"\n[auth]\nmode = "none"\n'),
      'Policy key "auth.mode" is "none", which is allowed only on a loopback listen address, but http.listen is "0.0.0.0:8080".',
    );
    assertRefused(
      await s.load(MINIMAL + '[auth]\nmode = "none"\n', {}, "192.168.1.5:8080"),
      'Policy key "auth.mode" is "none", which is allowed only on a loopback listen address, but http.listen is "192.168.1.5:8080".',
    );
    for (const listen of ["127.0.0.1:8080", "localhost:1", "[::1]:8080", "127.1.2.3:9"]) {
      assert.equal(
        assertLoaded(await s.load(MINIMAL + '[auth]\nmode = "none"\n', {}, listen)).auth.mode,
        "none",
      );
    }
  });
});

Deno.test("loadPolicy() reads the access token TTL from HTMCP_OAUTH_ACCESS_TOKEN_TTL_S", async () => {
  await withScratch(async (s) => {
    const policy = assertLoaded(await s.load(MINIMAL, { HTMCP_OAUTH_ACCESS_TOKEN_TTL_S: "600" }));
    assert.equal(policy.auth.accessTokenTtlSeconds, 600);
    for (const bad of ["0", "-5", "1h", "86401", "3600.5", " 60"]) {
      assertRefused(
        await s.load(MINIMAL, { HTMCP_OAUTH_ACCESS_TOKEN_TTL_S: bad }),
        `Environment variable HTMCP_OAUTH_ACCESS_TOKEN_TTL_S must be a whole number of seconds from 1 to 86400, got ${
          JSON.stringify(bad)
        }.`,
      );
    }
  });
});

Deno.test("loadPolicy() warns when an unsafe auth convenience is switched on", async () => {
  await withScratch(async (s) => {
    const policy = assertLoaded(
      await s.load(MINIMAL + "[auth]\nallow_localhost_bypass = true\nallow_plain_pkce = true\n"),
    );
    assert.equal(policy.auth.allowLocalhostBypass, true);
    assert.equal(policy.auth.allowPlainPkce, true);
    assert.equal(policy.warnings.filter((w) => w.startsWith('Policy key "auth.')).length, 2);
  });
});
