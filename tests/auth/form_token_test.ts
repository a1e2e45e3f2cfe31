/**
 * The approval form's token: a post is judged by the per-transaction form
 * token, never by its `Origin` header alone. `Origin: null` (what Chromium
 * sent under the old `no-referrer` policy) passes only with a valid token; a
 * missing, wrong or reused token is refused before the PIN is looked at,
 * audited, and printed for the operator, and no code is issued.
 */
import assert from "node:assert/strict";
import {
  approvalPost,
  authorizeGet,
  authorizeParams,
  BASE,
  call,
  formOf,
  PIN,
  pkce,
  register,
  withAuth,
} from "./_fixtures.ts";
import type { AuthorizationServer } from "../../src/auth/mod.ts";

function nullOriginPost(
  auth: AuthorizationServer,
  fields: Record<string, string>,
): Promise<Response> {
  return call(
    auth,
    new Request(`${BASE}/authorize`, {
      method: "POST",
      headers: { "content-type": "application/x-www-form-urlencoded", origin: "null" },
      body: new URLSearchParams(fields).toString(),
    }),
  );
}

async function openForm(auth: AuthorizationServer): Promise<{ txn: string; csrf: string }> {
  const clientId = await register(auth);
  const page = await authorizeGet(auth, authorizeParams(clientId, pkce().challenge));
  assert.equal(page.status, 200);
  return formOf(await page.text());
}

Deno.test("approval: an Origin null post without the form token is refused: 403, no code, audited, printed", async () => {
  await withAuth({}, async (f) => {
    const form = await openForm(f.auth);
    const cases: Record<string, string>[] = [
      { txn: form.txn, pin: PIN, decision: "approve" },
      { txn: form.txn, csrf: "", pin: PIN },
      // One character changed (never to itself: the token may end in "A" already).
      {
        txn: form.txn,
        csrf: `${form.csrf.slice(0, -1)}${form.csrf.endsWith("A") ? "B" : "A"}`,
        pin: PIN,
      },
      { txn: form.txn, csrf: form.txn, pin: PIN },
    ];
    for (const fields of cases) {
      const response = await nullOriginPost(f.auth, fields);
      assert.equal(response.status, 403, JSON.stringify(fields));
      assert.equal(response.headers.get("location"), null);
      assert.match(await response.text(), /form token is missing, wrong or already used/);
    }
    const events = await f.events();
    const refused = events.filter((e) => e.event === "approval_refused");
    assert.equal(refused.length, cases.length);
    for (const event of refused) {
      assert.equal(event.reason, "bad_form_token");
      assert.equal(event.origin, "null");
      assert.equal(event.remote_addr, "127.0.0.1");
      assert.equal(typeof event.client_id, "string");
    }
    // Nothing was issued, and the PIN was never looked at.
    for (const kind of ["code_issued", "client_approved", "client_persisted", "pin_failed"]) {
      assert.equal(events.some((e) => e.event === kind), false, kind);
    }
    assert.equal(f.operatorLines.length, cases.length);
    assert.match(
      f.operatorLines[0] ?? "",
      /^htmcp: approval refused from 127\.0\.0\.1 for client "Test Client" \(\S+\): missing, wrong or reused form token, Origin null\.$/,
    );
    const log = await Deno.readTextFile(f.auditPath);
    assert.ok(!log.includes(form.csrf), "the token is never logged");
    assert.ok(!f.operatorLines.join("\n").includes(form.csrf));
    assert.ok(!log.includes(PIN) && !f.operatorLines.join("\n").includes(PIN));
  });
});

Deno.test("approval: an Origin null post with the page's valid form token and PIN is approved", async () => {
  await withAuth({}, async (f) => {
    const form = await openForm(f.auth);
    const response = await nullOriginPost(f.auth, { ...form, pin: PIN, decision: "approve" });
    assert.equal(response.status, 303);
    const location = new URL(response.headers.get("location") ?? "");
    assert.ok(location.searchParams.get("code"));
    assert.equal(f.operatorLines.length, 0);
  });
});

Deno.test("approval: each form token is good for one post; a wrong PIN's page carries the next one", async () => {
  await withAuth({}, async (f) => {
    const form = await openForm(f.auth);
    const wrong = await approvalPost(f.auth, { ...form, pin: "not-the-pin-1" });
    assert.equal(wrong.status, 403);
    const next = formOf(await wrong.text());
    assert.equal(next.txn, form.txn);
    assert.notEqual(next.csrf, form.csrf);
    // The used token is refused even with the right PIN.
    const replay = await approvalPost(f.auth, { ...form, pin: PIN });
    assert.equal(replay.status, 403);
    assert.equal(replay.headers.get("location"), null);
    await replay.body?.cancel();
    assert.equal(
      (await f.events()).filter((e) => e.event === "approval_refused")[0]?.reason,
      "bad_form_token",
    );
    // A refused token does not burn the page's current one.
    const approved = await approvalPost(f.auth, { ...next, pin: PIN });
    assert.equal(approved.status, 303);
    assert.ok(new URL(approved.headers.get("location") ?? "").searchParams.get("code"));
    assert.match(f.operatorLines[0] ?? "", /wrong PIN \(1 from this address\)/);
  });
});

Deno.test("approval: a token belongs to its own transaction, not to another page", async () => {
  await withAuth({}, async (f) => {
    const mine = await openForm(f.auth);
    const other = await openForm(f.auth);
    const crossed = await approvalPost(f.auth, { txn: mine.txn, csrf: other.csrf, pin: PIN });
    assert.equal(crossed.status, 403);
    await crossed.body?.cancel();
    assert.equal((await approvalPost(f.auth, { ...mine, pin: PIN })).status, 303);
  });
});

Deno.test("approval: refused posts beyond 20 a minute are still audited but printed once as a summary", async () => {
  await withAuth({}, async (f) => {
    const form = await openForm(f.auth);
    for (let i = 0; i < 25; i++) {
      const response = await nullOriginPost(f.auth, { txn: form.txn, csrf: "forged", pin: PIN });
      assert.equal(response.status, 403);
      await response.body?.cancel();
    }
    assert.equal(
      (await f.events()).filter((e) => e.event === "approval_refused").length,
      25,
      "every refusal is audited",
    );
    assert.equal(f.operatorLines.length, 21);
    assert.match(f.operatorLines[20] ?? "", /more than 20 refused approvals this minute/);
    f.advance(60_000);
    const later = await nullOriginPost(f.auth, { txn: form.txn, csrf: "forged", pin: PIN });
    await later.body?.cancel();
    assert.equal(f.operatorLines.length, 22, "a new minute prints again");
    // The real page still works after the flood.
    assert.equal((await approvalPost(f.auth, { ...form, pin: PIN })).status, 303);
  });
});
