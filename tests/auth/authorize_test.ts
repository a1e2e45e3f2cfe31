/**
 * `/authorize`: which errors are shown on a page (client, redirect URI) and
 * which go back to the client (with `state` and `iss`); the approval page's
 * escaping and headers; the one-time, server-side transaction.
 */
import assert from "node:assert/strict";
import {
  approvalPost,
  authorizeGet,
  authorizeParams,
  BASE,
  call,
  formOf,
  obtainCode,
  PIN,
  pkce,
  REDIRECT,
  register,
  RESOURCE,
  txnOf,
  withAuth,
} from "./_fixtures.ts";

Deno.test("authorize: a missing or foreign resource is redirected back as invalid_target with state and iss", async () => {
  await withAuth({}, async (f) => {
    const clientId = await register(f.auth);
    // Errors go back only to an approved client's redirect URI.
    await obtainCode(f.auth, { clientId });
    const { challenge } = pkce();
    for (
      const resource of [
        null,
        "https://other.example/mcp",
        `${BASE}/`,
        `${BASE}/mcp/`,
        BASE,
        `${BASE}/mcp#x`,
      ]
    ) {
      const response = await authorizeGet(
        f.auth,
        authorizeParams(clientId, challenge, { resource }),
      );
      assert.equal(response.status, 302, String(resource));
      const location = new URL(response.headers.get("location") ?? "");
      assert.equal(`${location.origin}${location.pathname}`, REDIRECT);
      assert.equal(location.searchParams.get("error"), "invalid_target", String(resource));
      assert.equal(location.searchParams.get("state"), "st-123");
      assert.equal(location.searchParams.get("iss"), BASE);
      assert.equal(location.searchParams.get("code"), null);
    }
  });
});

Deno.test("authorize: an unregistered redirect_uri is shown on a page, never redirected", async () => {
  await withAuth({}, async (f) => {
    const clientId = await register(f.auth);
    const { challenge } = pkce();
    for (
      const redirect of [
        "https://attacker.example/cb",
        "http://127.0.0.1:45123/callback/",
        "http://127.0.0.1:45124/callback",
        "http://localhost:45123/callback",
        null,
      ]
    ) {
      const response = await authorizeGet(
        f.auth,
        authorizeParams(clientId, challenge, { redirect_uri: redirect }),
      );
      assert.equal(response.status, 400, String(redirect));
      assert.equal(response.headers.get("location"), null);
      assert.match(await response.text(), /invalid_request/);
    }
  });
});

Deno.test("authorize: an unknown or missing client_id is shown on a page", async () => {
  await withAuth({}, async (f) => {
    const { challenge } = pkce();
    for (const clientId of ["htmcp-unknown", ""]) {
      const response = await authorizeGet(f.auth, authorizeParams(clientId, challenge));
      assert.equal(response.status, 400);
      assert.equal(response.headers.get("location"), null);
      await response.body?.cancel();
    }
  });
});

Deno.test("authorize: missing state, non-S256 PKCE, bad response_type and unknown scope are redirected errors", async () => {
  await withAuth({}, async (f) => {
    const clientId = await register(f.auth, { scope: "shell:read" });
    await obtainCode(f.auth, { clientId, scope: "shell:read" });
    const { challenge, verifier } = pkce();
    const cases: [Record<string, string | null>, string, string | null][] = [
      [{ state: null }, "invalid_request", null],
      [{ code_challenge: null }, "invalid_request", "st-123"],
      [{ code_challenge_method: null, code_challenge: verifier }, "invalid_request", "st-123"],
      [{ code_challenge_method: "plain", code_challenge: verifier }, "invalid_request", "st-123"],
      [{ code_challenge: "short" }, "invalid_request", "st-123"],
      [{ response_type: "token" }, "unsupported_response_type", "st-123"],
      [{ response_type: null }, "invalid_request", "st-123"],
      [{ scope: "shell:root" }, "invalid_scope", "st-123"],
      // Registered for shell:read only: cannot ask for more.
      [{ scope: "shell:read shell:execute" }, "invalid_scope", "st-123"],
    ];
    for (const [overrides, error, state] of cases) {
      const response = await authorizeGet(f.auth, authorizeParams(clientId, challenge, overrides));
      assert.equal(response.status, 302, JSON.stringify(overrides));
      const location = new URL(response.headers.get("location") ?? "");
      assert.equal(location.searchParams.get("error"), error, JSON.stringify(overrides));
      assert.equal(location.searchParams.get("state"), state);
      assert.equal(location.searchParams.get("iss"), BASE);
    }
  });
});

Deno.test("authorize: a client not yet approved is never redirected to, even with an error (no open redirector)", async () => {
  await withAuth({}, async (f) => {
    const clientId = await register(f.auth, { redirect_uris: ["https://evil.example/phish"] });
    const { challenge } = pkce();
    for (const overrides of [{ response_type: "x" }, { resource: null }, { state: null }]) {
      const params = authorizeParams(clientId, challenge, {
        redirect_uri: "https://evil.example/phish",
        ...overrides,
      });
      const response = await authorizeGet(f.auth, params);
      assert.equal(response.status, 400, JSON.stringify(overrides));
      assert.equal(response.headers.get("location"), null);
      await response.body?.cancel();
    }
  });
});

Deno.test("authorize: plain PKCE works only when the operator enables it", async () => {
  await withAuth({
    policyOverrides: {
      auth: {
        mode: "oauth",
        allowLocalhostBypass: false,
        allowPlainPkce: true,
        accessTokenTtlSeconds: 3600,
        clientIdMetadataAllow: [],
        external: null,
      },
    },
  }, async (f) => {
    const clientId = await register(f.auth);
    const { verifier } = pkce();
    const response = await authorizeGet(
      f.auth,
      authorizeParams(clientId, verifier, { code_challenge_method: "plain" }),
    );
    assert.equal(response.status, 200);
    await response.body?.cancel();
  });
});

Deno.test("authorize: a parameter given twice is refused", async () => {
  await withAuth({}, async (f) => {
    const clientId = await register(f.auth);
    const { challenge } = pkce();
    const search = authorizeParams(clientId, challenge);
    search.append("resource", "https://other.example/mcp");
    const response = await authorizeGet(f.auth, search);
    assert.equal(response.status, 400);
    assert.equal(response.headers.get("location"), null);
    await response.body?.cancel();
  });
});

Deno.test("authorize: the approval page escapes a malicious client name and locks itself down", async () => {
  await withAuth({}, async (f) => {
    const evil = `<script>alert(1)</script>"><img src=x onerror=alert(2)>'&`;
    const clientId = await register(f.auth, { client_name: evil });
    const { challenge } = pkce();
    const state = `"><script>alert(3)</script>`;
    const response = await authorizeGet(f.auth, authorizeParams(clientId, challenge, { state }));
    assert.equal(response.status, 200);
    const html = await response.text();
    assert.ok(!html.includes("<script"), "no script element from reflected input");
    assert.ok(!html.includes("<img"), "no img element from reflected input");
    assert.ok(
      html.includes(
        "&lt;script&gt;alert(1)&lt;/script&gt;&quot;&gt;&lt;img src=x onerror=alert(2)&gt;&#39;&amp;",
      ),
    );
    assert.ok(!html.includes("alert(3)"), "state is never reflected on the page");
    assert.ok(!/(src|href)=["']?https?:/i.test(html), "no external assets");

    const csp = response.headers.get("content-security-policy") ?? "";
    assert.match(csp, /default-src 'none'/);
    assert.match(csp, /frame-ancestors 'none'/);
    assert.match(csp, /form-action 'self' http:\/\/127\.0\.0\.1:45123(;|$)/);
    assert.match(csp, /style-src 'sha256-[A-Za-z0-9+/]+=*'/);
    assert.ok(!csp.includes("unsafe-inline") && !csp.includes("script-src"));
    assert.equal(response.headers.get("x-frame-options"), "DENY");
    assert.equal(response.headers.get("cache-control"), "no-store");
    // same-origin: a browser keeps our Origin on our own form post (with
    // no-referrer Chromium sends "null"), and sends no referrer elsewhere.
    assert.equal(response.headers.get("referrer-policy"), "same-origin");
    assert.match(html, /<meta name="referrer" content="same-origin">/);
    assert.ok(!html.includes("no-referrer"));
    assert.equal(response.headers.get("content-type"), "text/html; charset=utf-8");
    // The page shows the redirect host, the resource and the scopes.
    assert.match(html, /<strong>127\.0\.0\.1:45123<\/strong>/);
    assert.ok(html.includes(RESOURCE));
    assert.match(html, /shell:read shell:execute/);
  });
});

Deno.test("authorize: the inline style's CSP hash matches the style actually served", async () => {
  await withAuth({}, async (f) => {
    const clientId = await register(f.auth);
    const response = await authorizeGet(f.auth, authorizeParams(clientId, pkce().challenge));
    const html = await response.text();
    const style = /<style>([\s\S]*?)<\/style>/.exec(html)?.[1] ?? "";
    const { createHash } = await import("node:crypto");
    const hash = createHash("sha256").update(style).digest("base64");
    assert.ok((response.headers.get("content-security-policy") ?? "").includes(`'sha256-${hash}'`));
  });
});

Deno.test("approval: the transaction is one-time and only its server-side parameters count", async () => {
  await withAuth({}, async (f) => {
    const clientId = await register(f.auth);
    const { challenge } = pkce();
    const page = await authorizeGet(f.auth, authorizeParams(clientId, challenge));
    const form = formOf(await page.text());
    // Re-posted parameters are ignored: the redirect goes where the request said.
    const approved = await approvalPost(f.auth, {
      ...form,
      pin: PIN,
      redirect_uri: "https://attacker.example/cb",
      state: "forged",
      scope: "shell:execute",
    });
    assert.equal(approved.status, 303);
    const location = new URL(approved.headers.get("location") ?? "");
    assert.equal(`${location.origin}${location.pathname}`, REDIRECT);
    assert.equal(location.searchParams.get("state"), "st-123");

    const again = await approvalPost(f.auth, { ...form, pin: PIN });
    assert.equal(again.status, 400);
    assert.equal(again.headers.get("location"), null);
    await again.body?.cancel();

    const forged = await approvalPost(f.auth, {
      txn: "made-up-transaction",
      csrf: form.csrf,
      pin: PIN,
    });
    assert.equal(forged.status, 400);
    await forged.body?.cancel();
  });
});

Deno.test("approval: a transaction expires after 10 minutes", async () => {
  await withAuth({}, async (f) => {
    const clientId = await register(f.auth);
    const page = await authorizeGet(f.auth, authorizeParams(clientId, pkce().challenge));
    const txn = txnOf(await page.text());
    f.advance(10 * 60_000 + 1);
    const late = await approvalPost(f.auth, { txn, pin: PIN });
    assert.equal(late.status, 400);
    await late.body?.cancel();
  });
});

Deno.test("approval: Deny of an approved client redirects access_denied with state and iss, and issues no code", async () => {
  await withAuth({}, async (f) => {
    const clientId = await register(f.auth);
    await obtainCode(f.auth, { clientId });
    const issued = async () => (await f.events()).filter((e) => e.event === "code_issued").length;
    const before = await issued();
    const page = await authorizeGet(f.auth, authorizeParams(clientId, pkce().challenge));
    const denied = await approvalPost(f.auth, { ...formOf(await page.text()), decision: "deny" });
    assert.equal(denied.status, 303);
    const location = new URL(denied.headers.get("location") ?? "");
    assert.equal(location.searchParams.get("error"), "access_denied");
    assert.equal(location.searchParams.get("state"), "st-123");
    assert.equal(location.searchParams.get("iss"), BASE);
    assert.equal(location.searchParams.get("code"), null);
    const kinds = (await f.events()).map((e) => e.event);
    assert.ok(kinds.includes("authorization_denied"));
    assert.equal(await issued(), before, "the denial issued no code");
  });
});

Deno.test("approval: Deny of a client never approved shows a page and redirects nowhere (no PIN needed, so no open redirector)", async () => {
  await withAuth({}, async (f) => {
    const clientId = await register(f.auth, { redirect_uris: ["https://evil.example/phish"] });
    const page = await authorizeGet(
      f.auth,
      authorizeParams(clientId, pkce().challenge, { redirect_uri: "https://evil.example/phish" }),
    );
    const denied = await approvalPost(f.auth, { ...formOf(await page.text()), decision: "deny" });
    assert.equal(denied.status, 200);
    assert.equal(denied.headers.get("location"), null);
    assert.match(await denied.text(), /not approved, so you are not sent back/);
    assert.ok((await f.events()).some((e) => e.event === "authorization_denied"));
  });
});

Deno.test("approval: a registered redirect URI's own query is kept beside code, state and iss", async () => {
  await withAuth({}, async (f) => {
    const redirect = "https://app.example/cb?tenant=7";
    const clientId = await register(f.auth, { redirect_uris: [redirect] });
    const { challenge } = pkce();
    const page = await authorizeGet(
      f.auth,
      authorizeParams(clientId, challenge, { redirect_uri: redirect }),
    );
    const approved = await approvalPost(f.auth, { ...formOf(await page.text()), pin: PIN });
    const location = new URL(approved.headers.get("location") ?? "");
    assert.equal(location.origin, "https://app.example");
    assert.equal(location.searchParams.get("tenant"), "7");
    assert.ok(location.searchParams.get("code"));
    assert.match(
      (await call(
        f.auth,
        new Request(
          `${BASE}/authorize?${authorizeParams(clientId, challenge, { redirect_uri: redirect })}`,
        ),
      )).headers.get("content-security-policy") ?? "",
      /form-action 'self' https:\/\/app\.example;/,
    );
  });
});

Deno.test("approval: an approved client's later authorizations still need the PIN", async () => {
  await withAuth({}, async (f) => {
    const { clientId } = await obtainCode(f.auth);
    const page = await authorizeGet(f.auth, authorizeParams(clientId, pkce().challenge));
    assert.equal(page.status, 200);
    const noPin = await approvalPost(f.auth, { ...formOf(await page.text()) });
    assert.equal(noPin.status, 403);
    assert.equal(noPin.headers.get("location"), null);
    await noPin.body?.cancel();
  });
});

Deno.test("approval: a form posted from another origin is refused before the PIN is checked", async () => {
  await withAuth({}, async (f) => {
    const clientId = await register(f.auth);
    const page = await authorizeGet(f.auth, authorizeParams(clientId, pkce().challenge));
    const form = formOf(await page.text());
    // A foreign origin is refused even with the page's valid form token.
    const foreign = ["https://attacker.example", "http://127.0.0.1:8932", "file://"];
    for (const origin of foreign) {
      const response = await call(
        f.auth,
        new Request(`${BASE}/authorize`, {
          method: "POST",
          headers: { "content-type": "application/x-www-form-urlencoded", origin },
          body: new URLSearchParams({ ...form, pin: PIN }).toString(),
        }),
      );
      assert.equal(response.status, 403, origin);
      assert.equal(response.headers.get("location"), null);
      await response.body?.cancel();
    }
    assert.equal((await f.events()).filter((e) => e.event === "pin_failed").length, 0);
    const refused = (await f.events()).filter((e) => e.event === "approval_refused");
    assert.deepEqual(
      refused.map((e) => [e.reason, e.origin]),
      foreign.map((o) => ["foreign_origin", o]),
    );
    assert.equal(f.operatorLines.length, foreign.length);
    assert.match(
      f.operatorLines[0] ?? "",
      /^htmcp: approval refused from 127\.0\.0\.1: posted from another site, Origin https:\/\/attacker\.example\.$/,
    );
    // The same form from our own page still works: the refusals used no token.
    assert.equal((await approvalPost(f.auth, { ...form, pin: PIN })).status, 303);
  });
});
