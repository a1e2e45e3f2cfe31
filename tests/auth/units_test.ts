/**
 * The small pure parts: PKCE against the RFC 7636 Appendix B vector, the
 * bounded tables, redirect URI and scope parsing, HTML escaping.
 */
import assert from "node:assert/strict";
import { verifyPkce } from "../../src/auth/server/pkce.ts";
import { ExpiringMap } from "../../src/auth/_expiring_map.ts";
import { checkRedirectUri } from "../../src/auth/server/redirect_uri.ts";
import { escapeHtml } from "../../src/auth/server/mod.ts";
import { parseScopeString } from "../../src/auth/mod.ts";

Deno.test("verifyPkce() accepts the RFC 7636 Appendix B example and refuses a near miss", () => {
  const verifier = "dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk";
  const challenge = "E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM";
  assert.equal(verifyPkce(verifier, challenge, "S256"), true);
  assert.equal(verifyPkce(verifier.slice(0, -1) + "l", challenge, "S256"), false);
  assert.equal(
    verifyPkce(challenge, challenge, "S256"),
    false,
    "the challenge is not the verifier",
  );
  assert.equal(verifyPkce(verifier, verifier, "plain"), true);
  assert.equal(verifyPkce("short", "short", "plain"), false, "verifier shorter than 43");
});

Deno.test("ExpiringMap refuses or evicts when full and forgets expired entries", () => {
  let now = 0;
  const refuse = new ExpiringMap<string, number>(2, "refuse", () => now);
  assert.ok(refuse.set("a", 1, 100));
  assert.ok(refuse.set("b", 2, 200));
  assert.equal(refuse.set("c", 3, 300), false);
  assert.ok(refuse.set("a", 9, 100), "replacing a key always works");
  now = 150;
  assert.equal(refuse.get("a"), undefined);
  assert.ok(refuse.set("c", 3, 300), "an expired entry frees room");
  assert.equal(refuse.take("c"), 3);
  assert.equal(refuse.get("c"), undefined, "take() is one-time");

  const lru = new ExpiringMap<string, number>(2, "evict-oldest", () => now);
  lru.set("x", 1, 1000);
  lru.set("y", 2, 1000);
  lru.set("z", 3, 1000);
  assert.equal(lru.get("x"), undefined);
  assert.equal(lru.size, 2);
  // `__proto__` is an ordinary key.
  lru.set("__proto__", 4, 1000);
  assert.equal(lru.get("__proto__"), 4);
});

Deno.test("checkRedirectUri() allows https and loopback http only", () => {
  assert.ok(checkRedirectUri("https://claude.ai/api/mcp/auth_callback").ok);
  assert.ok(checkRedirectUri("http://127.0.0.1:6274/oauth/callback").ok);
  assert.ok(checkRedirectUri("http://[::1]/cb").ok);
  assert.ok(checkRedirectUri("http://localhost/cb").ok);
  assert.equal(checkRedirectUri("http://localhost.evil.example/cb").ok, false);
  // All of 127.0.0.0/8 is this machine, as for every other loopback check.
  assert.ok(checkRedirectUri("http://127.0.0.2/cb").ok);
  assert.equal(checkRedirectUri("http://128.0.0.1/cb").ok, false);
  assert.equal(checkRedirectUri("HTTPS://example.com/\tcb").ok, false);
  assert.equal(checkRedirectUri("vscode://callback").ok, false);
});

Deno.test("parseScopeString() refuses unknown and inherited names", () => {
  const parsed = parseScopeString("shell:execute  shell:read");
  assert.ok(parsed.ok);
  assert.deepEqual([...parsed.scopes], ["shell:execute", "shell:read"]);
  for (const word of ["constructor", "__proto__", "toString", "SHELL:READ"]) {
    assert.deepEqual(parseScopeString(word), { ok: false, unknown: word });
  }
});

Deno.test("escapeHtml() escapes the five HTML-special characters", () => {
  assert.equal(
    escapeHtml(`<a href="x" title='y'>&</a>`),
    "&lt;a href=&quot;x&quot; title=&#39;y&#39;&gt;&amp;&lt;/a&gt;",
  );
});
