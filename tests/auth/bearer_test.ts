/**
 * The bearer check of the /mcp resource: every way a token can be wrong is
 * refused with its exact status, error and audited reason.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { SignJWT } from "jose";
import type { AuthorizationServer } from "../../src/auth/mod.ts";
import { ClientRegistry } from "../../src/auth/mod.ts";
import { BASE, mcpRequest, obtainToken, RESOURCE, withAuth } from "./_fixtures.ts";

const METADATA = `${BASE}/.well-known/oauth-protected-resource/mcp`;

async function refusal(auth: AuthorizationServer, request: Request) {
  const result = await auth.verifyBearer(request, { remoteAddr: "127.0.0.1" });
  assert.equal(result.ok, false);
  if (result.ok) throw new Error("unreachable");
  const body = await result.response.json();
  return {
    reason: result.reason,
    status: result.response.status,
    error: body.error as string,
    challenge: result.response.headers.get("www-authenticate"),
  };
}

/** Signs claims with the server's own secret, as a forger who stole nothing could not. */
async function signWithServerKey(
  stateDir: string,
  claims: Record<string, unknown>,
  header: Record<string, unknown> = { alg: "HS256", typ: "at+jwt" },
): Promise<string> {
  const key = await Deno.readFile(join(stateDir, "oauth-jwt-secret"));
  return await new SignJWT(claims).setProtectedHeader(header as { alg: string }).sign(key);
}

function claimsFor(clientId: string, nowSeconds: number, overrides: Record<string, unknown> = {}) {
  return {
    iss: BASE,
    aud: RESOURCE,
    sub: clientId,
    client_id: clientId,
    scope: "shell:read shell:execute",
    iat: nowSeconds,
    exp: nowSeconds + 600,
    jti: crypto.randomUUID(),
    ...overrides,
  };
}

const NOW_S = Math.floor(Date.UTC(2026, 0, 15, 12, 0, 0) / 1000);

Deno.test("verifyBearer() answers a request without a token with 401 and the discovery challenge", async () => {
  await withAuth({}, async (f) => {
    const r = await refusal(f.auth, mcpRequest(null));
    assert.equal(r.status, 401);
    assert.equal(r.reason, "missing_token");
    assert.equal(
      r.challenge,
      `Bearer resource_metadata="${METADATA}", scope="shell:read shell:execute"`,
    );
    // RFC 6750 §3.1: no error code when no credentials were sent, and nothing audited.
    assert.ok(!r.challenge?.includes("error="));
    assert.equal((await f.events()).filter((e) => e.event === "bearer_invalid").length, 0);
  });
});

Deno.test("verifyBearer() refuses a token in the query string with 400 invalid_request", async () => {
  await withAuth({}, async (f) => {
    const { token } = await obtainToken(f.auth);
    // Even alongside a good header: a token in a URL is already leaked to logs.
    const r = await refusal(f.auth, mcpRequest(`Bearer ${token}`, `?access_token=${token}`));
    assert.equal(r.status, 400);
    assert.equal(r.error, "invalid_request");
    assert.equal(r.reason, "token_in_query");
    assert.match(r.challenge ?? "", /error="invalid_request"/);
    const audited = (await f.events()).filter((e) => e.event === "bearer_invalid");
    assert.deepEqual(audited.map((e) => e.reason), ["token_in_query"]);
    assert.ok(!(await Deno.readTextFile(f.auditPath)).includes(token), "never the token");
  });
});

Deno.test("verifyBearer() refuses a random string, a Basic header and two tokens with 401 invalid_token", async () => {
  await withAuth({}, async (f) => {
    const cases: [string, string][] = [
      ["Bearer not-a-jwt", "malformed_token"],
      ["Basic dXNlcjpwYXNz", "malformed_header"],
      ["Bearer a.b.c, Bearer d.e.f", "malformed_header"],
      ["Bearer", "malformed_header"],
    ];
    for (const [header, reason] of cases) {
      const r = await refusal(f.auth, mcpRequest(header));
      assert.equal(r.status, 401, header);
      assert.equal(r.error, "invalid_token", header);
      assert.equal(r.reason, reason, header);
      assert.match(
        r.challenge ?? "",
        /^Bearer resource_metadata=".*", scope=".*", error="invalid_token"/,
      );
    }
  });
});

Deno.test("verifyBearer() refuses an expired token with 401 invalid_token (expired)", async () => {
  await withAuth({}, async (f) => {
    const { token } = await obtainToken(f.auth);
    f.advance(3600 * 1000 + 1000);
    const r = await refusal(f.auth, mcpRequest(`Bearer ${token}`));
    assert.equal(r.status, 401);
    assert.equal(r.error, "invalid_token");
    assert.equal(r.reason, "expired");
  });
});

Deno.test("verifyBearer() refuses a genuine-key token for another audience or issuer", async () => {
  await withAuth({}, async (f) => {
    const { clientId } = await obtainToken(f.auth);
    const cases: [Record<string, unknown>, string][] = [
      [{ aud: "http://127.0.0.1:8931/other" }, "wrong_audience"],
      [{ aud: "https://api.example.com/mcp" }, "wrong_audience"],
      [{ aud: [RESOURCE, "https://api.example.com/"] }, "bad_claims"],
      [{ iss: "https://evil.example" }, "wrong_issuer"],
      [{ iss: `${BASE}/` }, "wrong_issuer"],
    ];
    for (const [overrides, reason] of cases) {
      const token = await signWithServerKey(f.stateDir, claimsFor(clientId, NOW_S, overrides));
      const r = await refusal(f.auth, mcpRequest(`Bearer ${token}`));
      assert.equal(r.status, 401, JSON.stringify(overrides));
      assert.equal(r.error, "invalid_token");
      assert.equal(r.reason, reason, JSON.stringify(overrides));
    }
  });
});

Deno.test("verifyBearer() refuses alg none, a tampered payload and a foreign key", async () => {
  await withAuth({}, async (f) => {
    const { clientId, token } = await obtainToken(f.auth, { scope: "shell:read" });
    const enc = (o: unknown) =>
      btoa(JSON.stringify(o)).replaceAll("+", "-").replaceAll("/", "_").replaceAll("=", "");
    const payload = claimsFor(clientId, NOW_S);
    const none = `${enc({ alg: "none", typ: "at+jwt" })}.${enc(payload)}.`;
    let r = await refusal(f.auth, mcpRequest(`Bearer ${none}`));
    assert.equal(r.status, 401);
    assert.equal(r.error, "invalid_token");
    assert.equal(r.reason, "wrong_algorithm");

    // Escalate shell:read to shell:execute by editing the payload, keeping the signature.
    const [h, , s] = token.split(".");
    const escalated = `${h}.${enc({ ...payload, scope: "shell:read shell:execute" })}.${s}`;
    r = await refusal(f.auth, mcpRequest(`Bearer ${escalated}`));
    assert.equal(r.status, 401);
    assert.equal(r.reason, "bad_signature");

    const foreign = await new SignJWT(payload).setProtectedHeader({ alg: "HS256", typ: "at+jwt" })
      .sign(crypto.getRandomValues(new Uint8Array(32)));
    r = await refusal(f.auth, mcpRequest(`Bearer ${foreign}`));
    assert.equal(r.reason, "bad_signature");

    // Algorithm confusion: HS512 with the right key is still not HS256.
    const hs512 = await signWithServerKey(f.stateDir, payload, { alg: "HS512", typ: "at+jwt" });
    r = await refusal(f.auth, mcpRequest(`Bearer ${hs512}`));
    assert.equal(r.reason, "wrong_algorithm");

    const audited = (await f.events()).filter((e) => e.event === "bearer_invalid");
    assert.deepEqual(audited.map((e) => e.reason), [
      "wrong_algorithm",
      "bad_signature",
      "bad_signature",
      "wrong_algorithm",
    ]);
  });
});

Deno.test("verifyBearer() refuses a wrong typ, an iat in the future and missing claims", async () => {
  await withAuth({}, async (f) => {
    const { clientId } = await obtainToken(f.auth);
    const plainJwt = await signWithServerKey(f.stateDir, claimsFor(clientId, NOW_S), {
      alg: "HS256",
      typ: "JWT",
    });
    assert.equal((await refusal(f.auth, mcpRequest(`Bearer ${plainJwt}`))).reason, "wrong_type");

    const future = await signWithServerKey(
      f.stateDir,
      claimsFor(clientId, NOW_S, { iat: NOW_S + 120, exp: NOW_S + 4000 }),
    );
    assert.equal(
      (await refusal(f.auth, mcpRequest(`Bearer ${future}`))).reason,
      "issued_in_future",
    );
    const skew = await signWithServerKey(
      f.stateDir,
      claimsFor(clientId, NOW_S, { iat: NOW_S + 30 }),
    );
    assert.ok(
      (await f.auth.verifyBearer(mcpRequest(`Bearer ${skew}`))).ok,
      "30 s skew is tolerated",
    );

    const noJti = claimsFor(clientId, NOW_S);
    delete (noJti as Record<string, unknown>).jti;
    const missing = await signWithServerKey(f.stateDir, noJti);
    assert.equal((await refusal(f.auth, mcpRequest(`Bearer ${missing}`))).reason, "bad_claims");

    const badScope = await signWithServerKey(
      f.stateDir,
      claimsFor(clientId, NOW_S, { scope: "shell:root" }),
    );
    assert.equal((await refusal(f.auth, mcpRequest(`Bearer ${badScope}`))).reason, "bad_claims");

    const unknownClient = await signWithServerKey(
      f.stateDir,
      claimsFor("htmcp-never-approved", NOW_S),
    );
    assert.equal(
      (await refusal(f.auth, mcpRequest(`Bearer ${unknownClient}`))).reason,
      "client_unknown",
    );
  });
});

Deno.test("a client revoked in state_dir loses its tokens at the next request", async () => {
  await withAuth({}, async (f) => {
    const { clientId, token } = await obtainToken(f.auth);
    const other = await obtainToken(f.auth);
    assert.ok((await f.auth.verifyBearer(mcpRequest(`Bearer ${token}`))).ok);
    // Another process (the CLI) appends the revocation.
    const cli = new ClientRegistry(f.stateDir);
    const revoked = await cli.revokeClient(clientId, NOW_S);
    assert.ok(revoked.ok);
    const r = await refusal(f.auth, mcpRequest(`Bearer ${token}`));
    assert.equal(r.status, 401);
    assert.equal(r.error, "invalid_token");
    assert.equal(r.reason, "client_revoked");
    assert.ok(
      (await f.auth.verifyBearer(mcpRequest(`Bearer ${other.token}`))).ok,
      "others unaffected",
    );
    // The server records that it applied the revocation it noticed.
    const events = await f.events();
    assert.deepEqual(
      events.filter((e) => e.event === "client_revocation_applied").map((e) => e.client_id),
      [clientId],
    );
    assert.deepEqual(
      events.filter((e) => e.event === "bearer_invalid").map((e) => [e.reason, e.client_id]),
      [["client_revoked", clientId]],
    );
  });
});

Deno.test("a damaged revocation list makes every token fail closed with 503", async () => {
  await withAuth({}, async (f) => {
    const { token } = await obtainToken(f.auth);
    await Deno.writeTextFile(join(f.stateDir, "oauth-revocations.jsonl"), "{not json}\n", {
      append: true,
    });
    const r = await refusal(f.auth, mcpRequest(`Bearer ${token}`));
    assert.equal(r.status, 503);
    assert.equal(r.error, "temporarily_unavailable");
    assert.equal(r.reason, "revocation_list_unavailable");
  });
});

Deno.test("insufficientScope() is a 403 naming the needed scope and the metadata", async () => {
  await withAuth({}, async (f) => {
    const response = f.auth.insufficientScope("shell:execute");
    assert.equal(response.status, 403);
    assert.equal((await response.json()).error, "insufficient_scope");
    const challenge = response.headers.get("www-authenticate") ?? "";
    assert.match(challenge, /^Bearer error="insufficient_scope", scope="shell:execute"/);
    assert.ok(challenge.includes(`resource_metadata="${METADATA}"`));
    assert.equal(f.auth.protectedResourceMetadataUrl, METADATA);
  });
});
