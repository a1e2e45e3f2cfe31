/**
 * The HTTP approval page behind the admin PIN, against a real server on
 * 127.0.0.1 and real approval records in its state store: every refusal has
 * its exact status, leaves the record as it was, and is audited; an answer
 * goes through the store as the CLI's does.
 */
import assert from "node:assert/strict";
import { ApprovalStore } from "../../src/approvals/mod.ts";
import type { ApprovalRecord } from "../../src/approvals/mod.ts";
import { newApprovalId } from "../../src/approvals/mod.ts";
import { LocalStateStore } from "../../src/state/mod.ts";
import {
  type HarnessOptions,
  type HttpHarness,
  PIN,
  withHttp,
} from "../transport/http/_harness.ts";
import { connectWithOAuth } from "../transport/http/_oauth.ts";

const FORM = "application/x-www-form-urlencoded";

/** The headers Chromium sends when our own page's form is submitted. */
function browserPost(h: HttpHarness): Record<string, string> {
  return {
    "content-type": FORM,
    origin: new URL(h.url).origin,
    "sec-fetch-site": "same-origin",
    "sec-fetch-mode": "navigate",
    "sec-fetch-dest": "document",
  };
}

interface Form {
  readonly form: string;
  readonly csrf: string;
}

function formIn(html: string): Form {
  const form = /name="form" value="([^"]+)"/.exec(html)?.[1];
  const csrf = /name="csrf" value="([^"]+)"/.exec(html)?.[1];
  assert.ok(form !== undefined && csrf !== undefined, html);
  return { form, csrf };
}

async function unlockForm(h: HttpHarness): Promise<Form> {
  const page = await fetch(`${h.url}/approvals`);
  assert.equal(page.status, 200);
  return formIn(await page.text());
}

async function post(
  h: HttpHarness,
  fields: Record<string, string>,
  headers: Record<string, string> = browserPost(h),
): Promise<{ status: number; html: string; headers: Headers }> {
  const response = await fetch(`${h.url}/approvals`, {
    method: "POST",
    headers,
    body: new URLSearchParams(fields),
    redirect: "manual",
  });
  return { status: response.status, html: await response.text(), headers: response.headers };
}

/** Enters the right PIN; returns the unlocked page's form. */
async function unlocked(h: HttpHarness): Promise<{ form: Form; html: string }> {
  const page = await post(h, { ...(await unlockForm(h)), action: "unlock", pin: PIN });
  assert.equal(page.status, 200, page.html);
  return { form: formIn(page.html), html: page.html };
}

function record(overrides: Partial<ApprovalRecord> = {}): ApprovalRecord {
  const now = Date.now();
  return {
    id: newApprovalId(),
    owner: "client:abc",
    digest: "d".repeat(64),
    argv: ["/usr/bin/touch", "canary.txt"],
    command_raw: "touch canary.txt",
    cwd: ".",
    policy_hash: "p".repeat(64),
    rule: "touch canary.txt",
    justification: "Touching the canary needs a human.",
    created_ms: now,
    expires_ms: now + 60_000,
    state: "pending",
    answered_by: null,
    answered_ms: null,
    ...overrides,
  };
}

async function withPage(
  options: HarnessOptions,
  fn: (h: HttpHarness, approvals: ApprovalStore) => Promise<void>,
): Promise<void> {
  await withHttp(options, async (h) => {
    const store = new LocalStateStore(h.stateDir);
    try {
      await fn(h, new ApprovalStore(store));
    } finally {
      await store.close();
    }
  });
}

async function pageEvents(h: HttpHarness, name: string): Promise<Record<string, unknown>[]> {
  return await h.events(name);
}

Deno.test("without an admin PIN the approvals page is not served (404)", async () => {
  await withPage({ adminPin: null }, async (h) => {
    const get = await fetch(`${h.url}/approvals`);
    assert.equal(get.status, 404);
    await get.body?.cancel();
    const posted = await post(h, { action: "unlock", pin: PIN });
    assert.equal(posted.status, 404);
  });
});

Deno.test("the PIN form shows no pending command and carries the OAuth page's browser rules", async () => {
  await withPage({}, async (h, approvals) => {
    const held = record({ argv: ["/usr/bin/touch", "secret-plan.txt"] });
    await approvals.create(held);
    const page = await fetch(`${h.url}/approvals`);
    assert.equal(page.status, 200);
    const html = await page.text();
    assert.ok(!html.includes("secret-plan"), "the queue shows only after the PIN");
    assert.ok(!html.includes(held.id));
    assert.match(html, /name="pin"/);
    const csp = page.headers.get("content-security-policy") ?? "";
    assert.match(csp, /default-src 'none'/);
    assert.match(csp, /frame-ancestors 'none'/);
    assert.match(csp, new RegExp(`form-action 'self' ${new URL(h.url).origin}(;|$)`));
    assert.equal(page.headers.get("x-frame-options"), "DENY");
    assert.equal(page.headers.get("cache-control"), "no-store");
    assert.equal(page.headers.get("referrer-policy"), "same-origin");
    assert.equal(page.headers.get("x-content-type-options"), "nosniff");
    // A script's fetch or a frame is not a page load.
    const framed = await fetch(`${h.url}/approvals`, { headers: { "sec-fetch-dest": "iframe" } });
    assert.equal(framed.status, 403);
    await framed.body?.cancel();
    const put = await fetch(`${h.url}/approvals`, { method: "PUT" });
    assert.equal(put.status, 405);
    assert.equal(put.headers.get("allow"), "GET, POST");
    await put.body?.cancel();
  });
});

Deno.test("a held command with words the redactor hid says so on the page: the operator is not shown all that runs", async () => {
  await withPage({}, async (h, approvals) => {
    const hidden = record({
      argv: ["/usr/bin/touch", "oob-1", "[REDACTED:aws_access_key_id]"],
      command_raw: "touch oob-1 [REDACTED:aws_access_key_id]",
    });
    const plain = record({});
    await approvals.create(hidden);
    await approvals.create(plain);
    const { html } = await unlocked(h);
    const section = (id: string) =>
      html.slice(html.indexOf(`id="approval-${id}"`)).split("</section>")[0]!;
    assert.match(section(hidden.id), /1 word\(s\) hidden by the redactor/);
    assert.doesNotMatch(section(plain.id), /hidden by the redactor/);
    assert.match(section(plain.id), /Command \(exact argv\)/);
  });
});

Deno.test("a held command's stdin is shown on the page: its size and its redacted start", async () => {
  await withPage({}, async (h, approvals) => {
    const held = record({ stdin: { bytes: 27, preview: "PAYLOAD the human must see\n" } });
    await approvals.create(held);
    const { html } = await unlocked(h);
    assert.match(html, /Standard input \(27 bytes; its start, redacted\)/);
    assert.ok(html.includes("PAYLOAD the human must see\\n"), "the preview, as JSON");
  });
});

Deno.test("with the PIN the page lists a pending approval, and Allow answers it through the store as pin_page", async () => {
  await withPage({}, async (h, approvals) => {
    const held = record({ cwd: "sub/dir", owner: "client:xyz" });
    const other = record({ state: "denied", answered_by: "cli:root", answered_ms: Date.now() });
    await approvals.create(held);
    await approvals.create(other);
    const { form, html } = await unlocked(h);
    assert.ok(html.includes(held.id));
    assert.ok(!html.includes(other.id), "only pending approvals are listed");
    assert.ok(html.includes("[&quot;/usr/bin/touch&quot;,&quot;canary.txt&quot;]"), "exact argv");
    for (const text of ["sub/dir", "client:xyz", "touch canary.txt", "needs a human"]) {
      assert.ok(html.includes(text), text);
    }
    const answered = await post(h, { ...form, id: held.id, action: "allow" });
    assert.equal(answered.status, 200, answered.html);
    assert.match(answered.html, /Allowed/);
    const after = await approvals.get(held.id);
    assert.equal(after?.state, "allowed");
    assert.equal(after?.answered_by, "pin_page:127.0.0.1");
    const events = await pageEvents(h, "approval_page_answer");
    assert.deepEqual(events.map((e) => [e.approval_id, e.answer, e.by, e.remote_addr]), [
      [held.id, "allow", "pin_page:127.0.0.1", "127.0.0.1"],
    ]);
    // The answered approval is gone from the next page; Deny answers another.
    assert.ok(!answered.html.includes(`value="${held.id}"`));
    const second = record();
    await approvals.create(second);
    const again = await unlocked(h);
    const denied = await post(h, { ...again.form, id: second.id, action: "deny" });
    assert.equal(denied.status, 200, denied.html);
    assert.equal((await approvals.get(second.id))?.state, "denied");
  });
});

Deno.test("a wrong PIN is refused with 403 and audited, the record unchanged; after five the page answers 429", async () => {
  await withPage({}, async (h, approvals) => {
    const held = record();
    await approvals.create(held);
    for (let i = 1; i <= 5; i++) {
      const wrong = await post(h, {
        ...(await unlockForm(h)),
        action: "unlock",
        pin: "not-the-pin",
      });
      assert.equal(wrong.status, 403);
      assert.match(wrong.html, /The PIN is wrong/);
      assert.ok(!wrong.html.includes(held.id), "a wrong PIN shows nothing of the queue");
    }
    const limited = await post(h, { ...(await unlockForm(h)), action: "unlock", pin: PIN });
    assert.equal(limited.status, 429, "even the right PIN waits out the lockout");
    assert.ok(Number(limited.headers.get("retry-after")) > 0);
    assert.deepEqual(await approvals.get(held.id), held);
    const failed = await pageEvents(h, "pin_failed");
    assert.deepEqual(failed.map((e) => [e.client_id, e.remote_addr, e.failures]), [
      [null, "127.0.0.1", 1],
      [null, "127.0.0.1", 2],
      [null, "127.0.0.1", 3],
      [null, "127.0.0.1", 4],
      [null, "127.0.0.1", 5],
    ]);
    assert.equal((await pageEvents(h, "pin_rate_limited")).length, 1);
    const text = await Deno.readTextFile(h.auditPath);
    assert.ok(!text.includes("not-the-pin") && !text.includes(PIN), "no PIN in the audit log");
  });
});

Deno.test("wrong PINs on the approvals page spend the OAuth page's budget too", async () => {
  await withPage({}, async (h) => {
    for (let i = 0; i < 5; i++) {
      const wrong = await post(h, {
        ...(await unlockForm(h)),
        action: "unlock",
        pin: "nope-nope-1",
      });
      assert.equal(wrong.status, 403);
    }
    await assert.rejects(connectWithOAuth(h.mcpUrl, PIN), /Approval did not redirect: 429/);
  });
});

Deno.test("a missing, forged or replayed form token is refused with 403 and the record is unchanged", async () => {
  await withPage({}, async (h, approvals) => {
    const held = record();
    await approvals.create(held);
    const { form } = await unlocked(h);
    const missing = await post(h, { form: form.form, id: held.id, action: "allow" });
    assert.equal(missing.status, 403);
    const forged = await post(h, {
      form: form.form,
      csrf: "A".repeat(43),
      id: held.id,
      action: "allow",
    });
    assert.equal(forged.status, 403);
    const noForm = await post(h, { csrf: form.csrf, id: held.id, action: "allow" });
    assert.equal(noForm.status, 403);
    assert.deepEqual(await approvals.get(held.id), held, "nothing answered yet");

    // The real page still works after the forgeries; its token then is used up.
    const other = record();
    await approvals.create(other);
    const fresh = await unlocked(h);
    const first = await post(h, { ...fresh.form, id: held.id, action: "deny" });
    assert.equal(first.status, 200);
    const replayed = await post(h, { ...fresh.form, id: other.id, action: "allow" });
    assert.equal(replayed.status, 403);
    assert.match(replayed.html, /already used/);
    assert.deepEqual(await approvals.get(other.id), other);
    const reasons = (await pageEvents(h, "approval_page_refused")).map((e) => e.reason);
    assert.deepEqual(reasons, ["bad_form_token", "bad_form_token", "unknown_form", "unknown_form"]);
  });
});

Deno.test("the PIN form's own token cannot answer: without the PIN an answer is refused 403", async () => {
  await withPage({}, async (h, approvals) => {
    const held = record();
    await approvals.create(held);
    const refused = await post(h, { ...(await unlockForm(h)), id: held.id, action: "allow" });
    assert.equal(refused.status, 403);
    assert.deepEqual(await approvals.get(held.id), held);
    const events = await pageEvents(h, "approval_page_refused");
    assert.deepEqual(events.map((e) => [e.reason, e.approval_id]), [["pin_required", held.id]]);
  });
});

Deno.test("an OAuth access token with every scope is no credential on the approvals page", async () => {
  await withPage({}, async (h, approvals) => {
    const held = record();
    await approvals.create(held);
    const connection = await connectWithOAuth(h.mcpUrl, PIN);
    try {
      const token = connection.provider.tokens()?.access_token;
      assert.ok(token !== undefined);
      const withToken = { ...browserPost(h), authorization: `Bearer ${token}` };
      const noForm = await post(h, { id: held.id, action: "allow" }, withToken);
      assert.equal(noForm.status, 403);
      const noPin = await post(
        h,
        { ...(await unlockForm(h)), id: held.id, action: "allow" },
        withToken,
      );
      assert.equal(noPin.status, 403);
      const unlock = await post(h, { ...(await unlockForm(h)), action: "unlock" }, withToken);
      assert.equal(unlock.status, 403, "no PIN: the token does not stand in for it");
      assert.deepEqual(await approvals.get(held.id), held);
    } finally {
      await connection.close();
    }
  });
});

Deno.test("a cross-origin post is refused with 403, even from an origin MCP clients may use", async () => {
  const app = "http://app.example:8080";
  await withPage({ http: { allowedOrigins: [app] } }, async (h, approvals) => {
    const held = record();
    await approvals.create(held);
    const headers = browserPost(h);
    const cases: Record<string, string>[] = [
      { ...headers, origin: app, "sec-fetch-site": "cross-site" },
      { ...headers, origin: app, "sec-fetch-site": "same-origin" },
      { ...headers, "sec-fetch-site": "cross-site" },
      { ...headers, "sec-fetch-site": "same-site" },
      { ...headers, "sec-fetch-mode": "cors", "sec-fetch-dest": "empty" },
    ];
    for (const bad of cases) {
      const { form } = await unlocked(h);
      const refused = await post(h, { ...form, id: held.id, action: "allow" }, bad);
      assert.equal(refused.status, 403, JSON.stringify(bad));
      assert.match(refused.headers.get("content-type") ?? "", /text\/html/);
    }
    // Foreign and opaque origins never get past the transport's check.
    for (const origin of ["http://evil.example", "null"]) {
      const { form } = await unlocked(h);
      const refused = await post(h, { ...form, id: held.id, action: "allow" }, {
        ...headers,
        origin,
      });
      assert.equal(refused.status, 403);
      assert.equal(JSON.parse(refused.html).error, "forbidden_origin");
    }
    assert.deepEqual(await approvals.get(held.id), held);
    const reasons = (await pageEvents(h, "approval_page_refused")).map((e) => [e.reason, e.origin]);
    assert.deepEqual(reasons, [
      ["foreign_origin", app],
      ["foreign_origin", app],
      ["cross_site_fetch", new URL(h.url).origin],
      ["cross_site_fetch", new URL(h.url).origin],
      ["not_a_page", new URL(h.url).origin],
    ]);
  });
});

Deno.test("answers to an unknown, an already answered and an expired approval are refused 404, 409 and 410", async () => {
  await withPage({}, async (h, approvals) => {
    const answeredByCli = record();
    const soon = record({ expires_ms: Date.now() + 1500 });
    await approvals.create(answeredByCli);
    await approvals.create(soon);
    const { form, html } = await unlocked(h);
    assert.ok(html.includes(answeredByCli.id) && html.includes(soon.id));

    const unknown = newApprovalId();
    const missing = await post(h, { ...form, id: unknown, action: "allow" });
    assert.equal(missing.status, 404);
    assert.equal(await approvals.get(unknown), null);

    // Answered on the host while the page was open.
    assert.ok((await approvals.answer(answeredByCli.id, false, "cli:root")).ok);
    const cliAnswer = await approvals.get(answeredByCli.id);
    const conflict = await post(h, {
      ...formIn(missing.html),
      id: answeredByCli.id,
      action: "allow",
    });
    assert.equal(conflict.status, 409);
    assert.match(conflict.html, /already denied/);
    assert.deepEqual(await approvals.get(answeredByCli.id), cliAnswer);

    await new Promise((resolve) =>
      setTimeout(resolve, Math.max(0, soon.expires_ms - Date.now()) + 50)
    );
    const gone = await post(h, { ...formIn(conflict.html), id: soon.id, action: "allow" });
    assert.equal(gone.status, 410, gone.html);
    const expired = await approvals.get(soon.id);
    assert.equal(expired?.state, "expired");
    assert.equal(expired?.answered_by, null, "nobody's answer was recorded");

    const reasons = (await pageEvents(h, "approval_page_refused")).map((
      e,
    ) => [e.reason, e.approval_id]);
    assert.deepEqual(reasons, [["not_listed", unknown], ["denied", answeredByCli.id], [
      "expired",
      soon.id,
    ]]);
    assert.deepEqual(await pageEvents(h, "approval_page_answer"), []);
  });
});

Deno.test("with [auth] mode = none a PIN still opens the page, and a weak PIN stops the server", async () => {
  await withPage({ auth: { mode: "none" } }, async (h, approvals) => {
    const held = record();
    await approvals.create(held);
    const { html } = await unlocked(h);
    assert.ok(html.includes(held.id));
  });
  await assert.rejects(
    withPage({ auth: { mode: "none" }, adminPin: "12345678" }, () => Promise.resolve()),
    /HTMCP_OAUTH_ADMIN_PIN is a placeholder or an easy sequence/,
  );
});

Deno.test("two concurrent answers from one page: exactly one is accepted", async () => {
  await withPage({}, async (h, approvals) => {
    const a = record();
    const b = record();
    await approvals.create(a);
    await approvals.create(b);
    const { form } = await unlocked(h);
    const [first, second] = await Promise.all([
      post(h, { ...form, id: a.id, action: "allow" }),
      post(h, { ...form, id: b.id, action: "allow" }),
    ]);
    assert.deepEqual([first.status, second.status].sort(), [200, 403]);
    const states = [(await approvals.get(a.id))?.state, (await approvals.get(b.id))?.state].sort();
    assert.deepEqual(states, ["allowed", "pending"]);
  });
});

Deno.test("what a caller chose (argv, command text, folder) is escaped on the page", async () => {
  await withPage({}, async (h, approvals) => {
    const hostile = record({
      argv: ["/usr/bin/touch", "<script>alert(1)</script>", 'x" onfocus="y'],
      command_raw: "touch '<script>alert(1)</script>'",
      cwd: "<img src=x>",
    });
    await approvals.create(hostile);
    const { html } = await unlocked(h);
    assert.ok(html.includes(hostile.id));
    assert.ok(!html.includes("<script>") && !html.includes("<img"), html);
    assert.ok(!html.includes('" onfocus="'));
    assert.ok(html.includes("&lt;script&gt;alert(1)&lt;/script&gt;"));
  });
});
