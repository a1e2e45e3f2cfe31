/**
 * RFC 7591 registration: public clients only, redirect URIs https or loopback
 * http, every field bounded, the body limited while it streams, the number of
 * waiting registrations bounded.
 */
import assert from "node:assert/strict";
import { OAuthClientInformationFullSchema } from "@modelcontextprotocol/sdk/shared/auth.js";
import { BASE, call, REDIRECT, registerRequest, withAuth } from "./_fixtures.ts";

Deno.test("register: a public client gets an id, no secret, and token_endpoint_auth_method none", async () => {
  await withAuth({}, async (f) => {
    const response = await call(
      f.auth,
      registerRequest({
        client_name: "Claude",
        redirect_uris: [REDIRECT, "https://claude.ai/api/mcp/auth_callback"],
        token_endpoint_auth_method: "client_secret_basic",
        grant_types: ["authorization_code", "refresh_token"],
        scope: "shell:read",
        logo_uri: "https://example.com/logo.png",
      }),
    );
    assert.equal(response.status, 201);
    assert.equal(response.headers.get("cache-control"), "no-store");
    const body = await response.json();
    // The SDK client parses the response with this schema.
    assert.ok(OAuthClientInformationFullSchema.safeParse(body).success);
    assert.match(body.client_id, /^htmcp-[A-Za-z0-9_-]{22}$/);
    assert.equal(body.client_secret, undefined);
    assert.equal(body.token_endpoint_auth_method, "none");
    assert.deepEqual(body.grant_types, ["authorization_code"]);
    assert.equal(body.scope, "shell:read");
    assert.equal(body.logo_uri, undefined, "unused metadata is not echoed");
    const audited = (await f.events()).filter((e) => e.event === "client_registered");
    assert.equal(audited[0]?.client_id, body.client_id);
  });
});

Deno.test("register: refuses redirect URIs that are not https or loopback http", async () => {
  await withAuth({}, async (f) => {
    const bad = [
      "http://evil.example/callback",
      "http://192.168.1.10/callback",
      "http://127.0.0.1.evil.example/cb",
      "https://example.com/cb#frag",
      "https://user:pass@example.com/cb",
      "javascript:alert(1)",
      "data:text/html,hi",
      "myapp://callback",
      "file:///etc/passwd",
      "/relative/callback",
      "https://exa mple.com/cb",
      "https://example.com/\ncb",
      `https://example.com/${"a".repeat(1000)}`,
    ];
    for (const uri of bad) {
      const response = await call(f.auth, registerRequest({ redirect_uris: [uri] }));
      assert.equal(response.status, 400, uri);
      assert.equal((await response.json()).error, "invalid_redirect_uri", uri);
    }
    for (const uris of [[], "https://example.com/cb", [42], Array(9).fill(REDIRECT)]) {
      const response = await call(f.auth, registerRequest({ redirect_uris: uris }));
      assert.equal(response.status, 400, JSON.stringify(uris));
      assert.equal((await response.json()).error, "invalid_redirect_uri");
    }
    const good = ["http://localhost:3000/cb", "http://[::1]:8080/cb", "https://app.example/cb?x=1"];
    const response = await call(f.auth, registerRequest({ redirect_uris: good }));
    assert.equal(response.status, 201);
  });
});

Deno.test("register: refuses bad metadata with invalid_client_metadata", async () => {
  await withAuth({}, async (f) => {
    const cases: unknown[] = [
      { redirect_uris: [REDIRECT], client_name: "x".repeat(101) },
      { redirect_uris: [REDIRECT], client_name: "Safe\u202Eevil" },
      { redirect_uris: [REDIRECT], client_name: "line\nbreak" },
      { redirect_uris: [REDIRECT], client_name: 7 },
      { redirect_uris: [REDIRECT], scope: "shell:read admin" },
      { redirect_uris: [REDIRECT], grant_types: ["client_credentials"] },
      { redirect_uris: [REDIRECT], response_types: ["token"] },
      { redirect_uris: [REDIRECT], grant_types: Array(9).fill("authorization_code") },
      ["not", "an", "object"],
      Object.fromEntries(Array.from({ length: 65 }, (_, i) => [`k${i}`, i])),
    ];
    for (const body of cases) {
      const response = await call(f.auth, registerRequest(body));
      assert.equal(response.status, 400, JSON.stringify(body).slice(0, 80));
      assert.equal((await response.json()).error, "invalid_client_metadata");
    }
    const notJson = await call(
      f.auth,
      new Request(`${BASE}/register`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: "{oops",
      }),
    );
    assert.equal(notJson.status, 400);
    assert.equal((await notJson.json()).error, "invalid_client_metadata");
    const textPlain = await call(
      f.auth,
      new Request(`${BASE}/register`, {
        method: "POST",
        headers: { "content-type": "text/plain" },
        body: JSON.stringify({ redirect_uris: [REDIRECT] }),
      }),
    );
    assert.equal(textPlain.status, 400);
  });
});

Deno.test("register: a body over max_registration_bytes gets 413, declared or streamed", async () => {
  await withAuth({}, async (f) => {
    const limit = f.policy.http.maxRegistrationBytes;
    const big = JSON.stringify({
      redirect_uris: [REDIRECT],
      client_name: "x",
      pad: "y".repeat(limit),
    });
    const declared = await call(
      f.auth,
      new Request(`${BASE}/register`, {
        method: "POST",
        headers: { "content-type": "application/json", "content-length": String(big.length) },
        body: big,
      }),
    );
    assert.equal(declared.status, 413);
    assert.equal((await declared.json()).error, "request_too_large");

    // Chunked: no Content-Length; the stream is cut off once it passes the limit.
    let pulled = 0;
    const chunk = new TextEncoder().encode("y".repeat(1024));
    const stream = new ReadableStream<Uint8Array>({
      pull(controller) {
        pulled++;
        if (pulled > 1000) controller.close();
        else controller.enqueue(chunk);
      },
    });
    const chunked = await call(
      f.auth,
      new Request(`${BASE}/register`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: stream,
      }),
    );
    assert.equal(chunked.status, 413);
    assert.ok(
      pulled < 40,
      `stopped reading early (${pulled} chunks of 1 KiB for a ${limit} limit)`,
    );
    const rejected = (await f.events()).filter((e) => e.event === "http_rejected");
    assert.equal(rejected.length, 2);
    assert.equal(rejected[0]?.declared_bytes, big.length);
    assert.equal(rejected[1]?.declared_bytes, null);
    assert.equal(rejected[1]?.limit, limit);
  });
});

Deno.test("register: at most 100 registrations wait for approval; the next gets 503", async () => {
  await withAuth({}, async (f) => {
    for (let i = 0; i < 100; i++) {
      const response = await call(f.auth, registerRequest({ redirect_uris: [REDIRECT] }));
      assert.equal(response.status, 201);
      await response.body?.cancel();
    }
    const refused = await call(f.auth, registerRequest({ redirect_uris: [REDIRECT] }));
    assert.equal(refused.status, 503);
    assert.equal((await refused.json()).error, "temporarily_unavailable");
    // Pending registrations expire (30 minutes), freeing room.
    f.advance(30 * 60_000 + 1);
    const later = await call(f.auth, registerRequest({ redirect_uris: [REDIRECT] }));
    assert.equal(later.status, 201);
  });
});
