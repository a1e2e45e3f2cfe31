/**
 * The admin PIN: required and strong at startup, compared in constant time,
 * failures throttled per address (and overall) and audited.
 */
import assert from "node:assert/strict";
import { checkPinStrength } from "../../src/auth/mod.ts";
import {
  approvalPost,
  authorizeGet,
  authorizeParams,
  formOf,
  makeAuth,
  PIN,
  pkce,
  register,
  withAuth,
} from "./_fixtures.ts";
import type { AuthorizationServer } from "../../src/auth/mod.ts";

/** An open approval page: its transaction id and the form token of its latest rendering. */
interface Page {
  readonly txn: string;
  csrf: string;
}

async function openPage(auth: AuthorizationServer): Promise<Page> {
  const clientId = await register(auth);
  const page = await authorizeGet(auth, authorizeParams(clientId, pkce().challenge));
  return formOf(await page.text());
}

/**
 * Posts the page's form as a browser would, then takes the next form token
 * from the answer when it is a page again (each token is good for one post).
 */
async function post(
  auth: AuthorizationServer,
  page: Page,
  pin: string,
  info?: { remoteAddr: string },
): Promise<{ status: number; html: string; location: string | null }> {
  const response = await approvalPost(auth, { txn: page.txn, csrf: page.csrf, pin }, info);
  const html = await response.text();
  const next = /name="csrf" value="([^"]+)"/.exec(html)?.[1];
  if (next !== undefined) page.csrf = next;
  return { status: response.status, html, location: response.headers.get("location") };
}

Deno.test("approval: a wrong PIN gets 403, no code, and a pin_failed audit record", async () => {
  await withAuth({}, async (f) => {
    const page = await openPage(f.auth);
    for (const pin of ["wrong-pin-1", "", PIN.toUpperCase(), `${PIN} `]) {
      const used = page.csrf;
      const response = await post(f.auth, page, pin);
      assert.equal(response.status, 403, JSON.stringify(pin));
      assert.equal(response.location, null);
      assert.match(response.html, /The PIN is wrong/);
      assert.ok(response.html.includes(`value="${page.txn}"`), "the same page can be retried");
      assert.notEqual(page.csrf, used, "each rendering carries a new form token");
    }
    const failed = (await f.events()).filter((e) => e.event === "pin_failed");
    assert.deepEqual(failed.map((e) => e.failures), [1, 2, 3, 4]);
    assert.equal(failed[0]?.remote_addr, "127.0.0.1");
    assert.ok(!(await Deno.readTextFile(f.auditPath)).includes("wrong-pin-1"), "never the PIN");
    // The transaction survived the failures.
    assert.equal((await post(f.auth, page, PIN)).status, 303);
  });
});

Deno.test("approval: after 5 wrong PINs an address gets 429 even with the right PIN, until the window ends", async () => {
  await withAuth({}, async (f) => {
    const page = await openPage(f.auth);
    const attacker = { remoteAddr: "203.0.113.9" };
    for (let i = 0; i < 5; i++) {
      const response = await post(f.auth, page, `guess-${i}-xx`, attacker);
      assert.equal(response.status, 403);
    }
    const blocked = await approvalPost(
      f.auth,
      { txn: page.txn, csrf: page.csrf, pin: PIN },
      attacker,
    );
    assert.equal(blocked.status, 429);
    assert.equal(blocked.headers.get("retry-after"), "900");
    assert.equal(blocked.headers.get("location"), null);
    await blocked.body?.cancel();
    const limited = (await f.events()).filter((e) => e.event === "pin_rate_limited");
    assert.equal(limited.length, 1);
    assert.equal(limited[0]?.limit, "address");

    // Another address is not blocked by this one.
    const operator = await post(f.auth, await openPage(f.auth), PIN, {
      remoteAddr: "198.51.100.4",
    });
    assert.equal(operator.status, 303);

    // After the window the blocked address may try again.
    f.advance(15 * 60_000 + 1);
    const later = await post(f.auth, await openPage(f.auth), PIN, attacker);
    assert.equal(later.status, 303);
  });
});

Deno.test("approval: a global failure budget stops guessing spread over many addresses", async () => {
  await withAuth({
    pinLimits: { perAddress: 5, global: 6, windowMs: 60_000, trackedAddresses: 4 },
  }, async (f) => {
    const page = await openPage(f.auth);
    for (let i = 0; i < 6; i++) {
      const response = await post(f.auth, page, "not-the-pin", { remoteAddr: `2001:db8::${i}` });
      assert.equal(response.status, 403);
    }
    const fresh = await post(f.auth, page, PIN, { remoteAddr: "2001:db8::99" });
    assert.equal(fresh.status, 429);
    const limited = (await f.events()).filter((e) => e.event === "pin_rate_limited");
    assert.equal(limited[0]?.limit, "global");
  });
});

Deno.test("approval: with no PIN configured on loopback, the page offers no approval and POST is refused", async () => {
  await withAuth({ adminPin: null }, async (f) => {
    const clientId = await register(f.auth);
    const page = await authorizeGet(f.auth, authorizeParams(clientId, pkce().challenge));
    assert.equal(page.status, 200);
    const html = await page.text();
    assert.match(html, /HTMCP_OAUTH_ADMIN_PIN/);
    assert.ok(!html.includes('value="approve"'));
    const response = await approvalPost(f.auth, { ...formOf(html), pin: "" });
    assert.equal(response.status, 403);
    assert.equal(response.headers.get("location"), null);
    await response.body?.cancel();
  });
});

Deno.test("createAuthorizationServer() refuses a weak PIN and a missing PIN when base_url is set", async () => {
  for (
    const pin of ["short", "changeme", "12345678", "password", "aaaaaaaa", "abcdefghij", "98765432"]
  ) {
    await assert.rejects(makeAuth({ adminPin: pin }), /HTMCP_OAUTH_ADMIN_PIN/, pin);
  }
  await assert.rejects(
    makeAuth({
      adminPin: null,
      baseUrl: "https://mcp.example.com",
      policyOverrides: {
        http: {
          listen: "127.0.0.1:8931",
          baseUrl: "https://mcp.example.com",
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
        },
      },
    }),
    /HTMCP_OAUTH_ADMIN_PIN must be set/,
  );
  // A non-loopback origin needs a PIN even without base_url.
  await assert.rejects(
    makeAuth({ adminPin: null, baseUrl: "https://192.0.2.7:8443" }),
    /HTMCP_OAUTH_ADMIN_PIN must be set/,
  );
});

Deno.test("checkPinStrength() accepts random PINs and refuses placeholders and runs", () => {
  for (const pin of ["plum-7-harbor", "84729163", "Tr0ub4dor&3"]) {
    assert.ok(checkPinStrength(pin).ok, pin);
  }
  for (
    const pin of ["1234567", "CHANGEME", "Password", "00000000", "23456789", "hgfedcba", "qwertyui"]
  ) {
    assert.equal(checkPinStrength(pin).ok, false, pin);
  }
});
