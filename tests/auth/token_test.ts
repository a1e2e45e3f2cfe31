/**
 * `POST /token`: PKCE, one-time codes (and the revocation a replay causes),
 * exact redirect_uri, client and resource binding, expiry, no caching.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { REVOCATIONS_FILE } from "../../src/auth/state/mod.ts";
import type { AuthorizationServer } from "../../src/auth/mod.ts";
import {
  BASE,
  call,
  mcpRequest,
  obtainCode,
  REDIRECT,
  register,
  RESOURCE,
  tokenPost,
  withAuth,
} from "./_fixtures.ts";

async function redeem(
  auth: AuthorizationServer,
  got: { clientId: string; code: string; verifier: string },
  overrides: Record<string, string | null> = {},
) {
  const fields: Record<string, string | null> = {
    grant_type: "authorization_code",
    code: got.code,
    code_verifier: got.verifier,
    client_id: got.clientId,
    redirect_uri: REDIRECT,
    resource: RESOURCE,
    ...overrides,
  };
  const clean: Record<string, string> = {};
  for (const [k, v] of Object.entries(fields)) if (v !== null) clean[k] = v;
  const response = await tokenPost(auth, clean);
  const body = await response.json();
  return { status: response.status, body, headers: response.headers };
}

Deno.test("token: a replayed code gets invalid_grant and revokes the token it issued", async () => {
  await withAuth({}, async (f) => {
    const got = await obtainCode(f.auth);
    const first = await redeem(f.auth, got);
    assert.equal(first.status, 200);
    const token = first.body.access_token;
    assert.ok((await f.auth.verifyBearer(mcpRequest(`Bearer ${token}`))).ok);

    const replay = await redeem(f.auth, got);
    assert.equal(replay.status, 400);
    assert.equal(replay.body.error, "invalid_grant");
    assert.equal(replay.headers.get("cache-control"), "no-store");

    const after = await f.auth.verifyBearer(mcpRequest(`Bearer ${token}`));
    assert.equal(after.ok, false);
    if (!after.ok) {
      assert.equal(after.reason, "token_revoked");
      assert.equal(after.response.status, 401);
    }
    const reused = (await f.events()).filter((e) => e.event === "code_reused");
    assert.equal(reused.length, 1);
    assert.deepEqual(reused[0]?.client_id, got.clientId);
    assert.equal((reused[0]?.revoked_jtis as string[]).length, 1);
    assert.equal(reused[0]?.revocation_stored, true);
  });
});

Deno.test("token: two redemptions of one code at once leave no token that works", async () => {
  await withAuth({}, async (f) => {
    // The red team's race: the replay arrived while the first redemption
    // awaited its client lookup, revoked the still-empty list, and the first
    // then issued a token nothing revoked.
    for (let trial = 0; trial < 10; trial++) {
      const got = await obtainCode(f.auth);
      const both = await Promise.all([redeem(f.auth, got), redeem(f.auth, got)]);
      assert.ok(both.some((one) => one.status === 400), JSON.stringify(both.map((b) => b.body)));
      for (const one of both.filter((one) => one.status === 200)) {
        const verdict = await f.auth.verifyBearer(mcpRequest(`Bearer ${one.body.access_token}`));
        assert.equal(verdict.ok, false, `trial ${trial}: the token issued still works`);
      }
    }
  });
});

Deno.test("token: a replay whose revocation cannot be stored is audited as such, and the token is still refused here", async () => {
  await withAuth({}, async (f) => {
    const got = await obtainCode(f.auth);
    const first = await redeem(f.auth, got);
    assert.equal(first.status, 200);
    // The revocation list becomes a folder: every append to it fails.
    const list = join(f.dir, "state", REVOCATIONS_FILE);
    await Deno.remove(list).catch((error) => {
      if (!(error instanceof Deno.errors.NotFound)) throw error;
    });
    await Deno.mkdir(list);
    const replay = await redeem(f.auth, got);
    assert.equal(replay.status, 400);
    assert.equal(replay.body.error, "invalid_grant");
    const reused = (await f.events()).filter((e) => e.event === "code_reused");
    assert.equal(reused.length, 1);
    assert.equal(reused[0]?.revocation_stored, false);
    assert.equal(typeof reused[0]?.revocation_error, "string");
    const after = await f.auth.verifyBearer(mcpRequest(`Bearer ${first.body.access_token}`));
    assert.equal(after.ok, false);
  });
});

Deno.test("token: a replay after the code's 60 seconds still revokes its token", async () => {
  await withAuth({}, async (f) => {
    const got = await obtainCode(f.auth);
    const token = (await redeem(f.auth, got)).body.access_token;
    f.advance(5 * 60_000);
    const replay = await redeem(f.auth, got);
    assert.equal(replay.status, 400);
    assert.equal(replay.body.error, "invalid_grant");
    const after = await f.auth.verifyBearer(mcpRequest(`Bearer ${token}`));
    assert.equal(after.ok, false);
    if (!after.ok) assert.equal(after.reason, "token_revoked");
  });
});

Deno.test("token: the replay revocation is persisted, so another server process honours it", async () => {
  await withAuth({}, async (f) => {
    const got = await obtainCode(f.auth);
    const token = (await redeem(f.auth, got)).body.access_token;
    assert.equal((await redeem(f.auth, got)).status, 400);
    const { makeAuth } = await import("./_fixtures.ts");
    const second = await makeAuth({ dir: f.dir });
    try {
      const result = await second.auth.verifyBearer(mcpRequest(`Bearer ${token}`));
      assert.equal(result.ok, false);
      if (!result.ok) assert.equal(result.reason, "token_revoked");
    } finally {
      await second.close();
    }
  });
});

Deno.test("token: a wrong code_verifier (PKCE mismatch) gets invalid_grant and burns the code", async () => {
  await withAuth({}, async (f) => {
    const got = await obtainCode(f.auth);
    const wrong = await redeem(f.auth, got, { code_verifier: "x".repeat(43) });
    assert.equal(wrong.status, 400);
    assert.equal(wrong.body.error, "invalid_grant");
    const missing = await redeem(f.auth, await obtainCode(f.auth), { code_verifier: null });
    assert.equal(missing.status, 400);
    assert.equal(missing.body.error, "invalid_grant");
    // One attempt per code: the right verifier no longer helps.
    const retry = await redeem(f.auth, got);
    assert.equal(retry.status, 400);
    assert.equal(retry.body.error, "invalid_grant");
  });
});

Deno.test("token: a different redirect_uri, client or resource is refused", async () => {
  await withAuth({}, async (f) => {
    const cases: [Record<string, string | null>, string][] = [
      [{ redirect_uri: "http://127.0.0.1:45123/other" }, "invalid_grant"],
      [{ redirect_uri: null }, "invalid_grant"],
      [{ resource: "https://other.example/mcp" }, "invalid_target"],
      [{ resource: null }, "invalid_target"],
    ];
    for (const [overrides, error] of cases) {
      const r = await redeem(f.auth, await obtainCode(f.auth), overrides);
      assert.equal(r.status, 400, JSON.stringify(overrides));
      assert.equal(r.body.error, error, JSON.stringify(overrides));
    }
    const otherClient = await register(f.auth);
    const r = await redeem(f.auth, await obtainCode(f.auth), { client_id: otherClient });
    assert.equal(r.status, 400);
    assert.equal(r.body.error, "invalid_grant");
  });
});

Deno.test("token: a code older than 60 seconds is expired", async () => {
  await withAuth({}, async (f) => {
    const got = await obtainCode(f.auth);
    f.advance(61_000);
    const r = await redeem(f.auth, got);
    assert.equal(r.status, 400);
    assert.equal(r.body.error, "invalid_grant");
  });
});

Deno.test("token: an unknown code, other grant types and malformed requests are refused", async () => {
  await withAuth({}, async (f) => {
    const got = await obtainCode(f.auth);
    assert.equal((await redeem(f.auth, { ...got, code: "made-up" })).body.error, "invalid_grant");
    const refresh = await redeem(f.auth, got, { grant_type: "refresh_token" });
    assert.equal(refresh.status, 400);
    assert.equal(refresh.body.error, "unsupported_grant_type");
    const noClient = await redeem(f.auth, got, { client_id: null });
    assert.equal(noClient.body.error, "invalid_request");

    const duplicate = await call(
      f.auth,
      new Request(`${BASE}/token`, {
        method: "POST",
        headers: { "content-type": "application/x-www-form-urlencoded" },
        body: `grant_type=authorization_code&code=${got.code}&code=${got.code}`,
      }),
    );
    assert.equal(duplicate.status, 400);
    assert.equal((await duplicate.json()).error, "invalid_request");

    const json = await call(
      f.auth,
      new Request(`${BASE}/token`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ grant_type: "authorization_code" }),
      }),
    );
    assert.equal(json.status, 400);
    assert.equal((await json.json()).error, "invalid_request");

    const basic = await call(
      f.auth,
      new Request(`${BASE}/token`, {
        method: "POST",
        headers: {
          "content-type": "application/x-www-form-urlencoded",
          authorization: "Basic Y2xpZW50OnNlY3JldA==",
        },
        body: "grant_type=authorization_code",
      }),
    );
    assert.equal(basic.status, 401);
    assert.equal((await basic.json()).error, "invalid_client");
    // None of those attempts touched the code: it still redeems once.
    assert.equal((await redeem(f.auth, got)).status, 200);
  });
});

Deno.test("token: a client revoked between approval and redemption gets no token", async () => {
  await withAuth({}, async (f) => {
    const got = await obtainCode(f.auth);
    const { ClientRegistry } = await import("../../src/auth/mod.ts");
    assert.ok((await new ClientRegistry(f.stateDir).revokeClient(got.clientId, 0)).ok);
    const r = await redeem(f.auth, got);
    assert.equal(r.status, 400);
    assert.equal(r.body.error, "invalid_grant");
  });
});

Deno.test("token: an oversized token request is refused with 413 before parsing", async () => {
  await withAuth({}, async (f) => {
    const response = await call(
      f.auth,
      new Request(`${BASE}/token`, {
        method: "POST",
        headers: { "content-type": "application/x-www-form-urlencoded" },
        body: `grant_type=authorization_code&code=${"a".repeat(20_000)}`,
      }),
    );
    assert.equal(response.status, 413);
    assert.equal((await response.json()).error, "request_too_large");
  });
});
