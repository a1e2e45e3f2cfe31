/**
 * The whole authorization code flow through `auth.handle()`, as an MCP client
 * and the operator perform it: register, open the approval page, approve with
 * the PIN, redeem the code, present the token.
 */
import assert from "node:assert/strict";
import { decodeJwt, decodeProtectedHeader } from "jose";
import {
  approvalPost,
  authorizeGet,
  authorizeParams,
  BASE,
  call,
  formOf,
  mcpRequest,
  obtainToken,
  PIN,
  pkce,
  REDIRECT,
  register,
  RESOURCE,
  tokenPost,
  withAuth,
} from "./_fixtures.ts";
import { ClientRegistry } from "../../src/auth/mod.ts";

Deno.test("the full flow issues a token that verifyBearer accepts with its scopes", async () => {
  await withAuth({}, async (f) => {
    const clientId = await register(f.auth);
    const { verifier, challenge } = pkce();
    const page = await authorizeGet(f.auth, authorizeParams(clientId, challenge));
    assert.equal(page.status, 200);
    const html = await page.text();
    assert.match(html, /Test Client/);
    assert.match(html, /127\.0\.0\.1:45123/);
    assert.match(html, /shell:execute/);

    const approved = await approvalPost(f.auth, {
      ...formOf(html),
      pin: PIN,
      decision: "approve",
    });
    assert.equal(approved.status, 303);
    const location = new URL(approved.headers.get("location") ?? "");
    assert.equal(`${location.origin}${location.pathname}`, REDIRECT);
    assert.equal(location.searchParams.get("state"), "st-123");
    assert.equal(location.searchParams.get("iss"), BASE);
    const code = location.searchParams.get("code") ?? "";
    assert.ok(code.length >= 43, "code carries at least 256 bits");

    const response = await tokenPost(f.auth, {
      grant_type: "authorization_code",
      code,
      code_verifier: verifier,
      client_id: clientId,
      redirect_uri: REDIRECT,
      resource: RESOURCE,
    });
    assert.equal(response.status, 200);
    assert.equal(response.headers.get("cache-control"), "no-store");
    assert.equal(response.headers.get("pragma"), "no-cache");
    const body = await response.json();
    assert.equal(body.token_type, "Bearer");
    assert.equal(body.expires_in, 3600);
    assert.equal(body.scope, "shell:read shell:execute");
    assert.equal(body.refresh_token, undefined);

    const header = decodeProtectedHeader(body.access_token);
    assert.deepEqual(header, { alg: "HS256", typ: "at+jwt" });
    const claims = decodeJwt(body.access_token);
    assert.equal(claims.iss, BASE);
    assert.equal(claims.aud, RESOURCE);
    assert.equal(claims.sub, clientId);
    assert.equal(claims.client_id, clientId);
    assert.equal(claims.scope, "shell:read shell:execute");
    assert.equal((claims.exp ?? 0) - (claims.iat ?? 0), 3600);
    assert.equal(typeof claims.jti, "string");

    const verified = await f.auth.verifyBearer(mcpRequest(`Bearer ${body.access_token}`));
    assert.ok(verified.ok);
    assert.equal(verified.clientId, clientId);
    assert.deepEqual([...verified.scopes], ["shell:read", "shell:execute"]);
    assert.equal(verified.jti, claims.jti);
    assert.equal(verified.expiresAt, claims.exp);

    const kinds = (await f.events()).map((e) => e.event);
    for (
      const kind of [
        "client_registered",
        "client_persisted",
        "client_approved",
        "code_issued",
        "token_issued",
      ]
    ) {
      assert.ok(kinds.includes(kind), `audit holds ${kind}: ${kinds.join(",")}`);
    }
    const text = await Deno.readTextFile(f.auditPath);
    assert.ok(!text.includes(body.access_token), "the audit log never holds the token");
    assert.ok(!text.includes(code), "the audit log never holds the code");
    assert.ok(!text.includes(PIN), "the audit log never holds the PIN");
  });
});

Deno.test("a registered client is persisted only after the operator's first approval", async () => {
  await withAuth({}, async (f) => {
    const clientId = await register(f.auth);
    const registry = new ClientRegistry(f.stateDir);
    assert.equal(await registry.findApproved(clientId), null);
    await obtainToken(f.auth, { clientId });
    const persisted = await registry.findApproved(clientId);
    assert.equal(persisted?.client_name, "Test Client");
    assert.deepEqual(persisted?.redirect_uris, [REDIRECT]);
  });
});

Deno.test("an approved client is still known to a second server on the same state_dir", async () => {
  await withAuth({}, async (f) => {
    const { clientId } = await obtainToken(f.auth);
    // A restart: pending clients are gone, approved ones come from state_dir.
    const { makeAuth } = await import("./_fixtures.ts");
    const second = await makeAuth({ dir: f.dir });
    try {
      const again = await obtainToken(second.auth, { clientId });
      assert.equal(again.clientId, clientId);
      // Same secret file: the first server accepts the second server's token.
      const verified = await f.auth.verifyBearer(mcpRequest(`Bearer ${again.token}`));
      assert.ok(verified.ok);
    } finally {
      await second.close();
    }
  });
});

Deno.test("a narrower scope request yields a token with only that scope", async () => {
  await withAuth({}, async (f) => {
    const { token, body } = await obtainToken(f.auth, { scope: "shell:read" });
    assert.equal(body.scope, "shell:read");
    const verified = await f.auth.verifyBearer(mcpRequest(`Bearer ${token}`));
    assert.ok(verified.ok);
    assert.deepEqual([...verified.scopes], ["shell:read"]);
  });
});

Deno.test("handle() returns null for paths that are not OAuth routes", async () => {
  await withAuth({}, async (f) => {
    assert.equal(
      await f.auth.handle(new Request(`${BASE}/mcp`), { remoteAddr: "127.0.0.1" }),
      null,
    );
    assert.equal(await f.auth.handle(new Request(`${BASE}/`), { remoteAddr: "127.0.0.1" }), null);
    const wrongMethod = await call(f.auth, new Request(`${BASE}/token`));
    assert.equal(wrongMethod.status, 405);
    assert.equal(wrongMethod.headers.get("allow"), "POST, OPTIONS");
  });
});
