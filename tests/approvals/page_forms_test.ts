/**
 * The approval page's form tokens on their own, with a test clock: single
 * use, constant-time checked, bounded in time, and a grant never outlives
 * the PIN entry that made it.
 */
import assert from "node:assert/strict";
import {
  GRANT_TTL_MS,
  MAX_UNLOCK_FORMS,
  PageForms,
  UNLOCK_TTL_MS,
} from "../../src/approvals/page/forms.ts";

function clock(start = 1_000_000): { now: () => number; advance(ms: number): void } {
  let t = start;
  return { now: () => t, advance: (ms) => void (t += ms) };
}

Deno.test("a form is accepted once with its own token and refused after", () => {
  const c = clock();
  const forms = new PageForms(c.now);
  const form = forms.mintUnlock();
  assert.deepEqual(forms.take(form.id, "wrong"), { ok: false, reason: "bad_form_token" });
  assert.deepEqual(forms.take(form.id, ""), { ok: false, reason: "bad_form_token" });
  const taken = forms.take(form.id, form.csrf);
  assert.ok(taken.ok);
  assert.equal(taken.form.kind, "unlock");
  assert.deepEqual(forms.take(form.id, form.csrf), { ok: false, reason: "unknown_form" });
});

Deno.test("a grant keeps the expiry of the PIN entry through every rotation", () => {
  const c = clock();
  const forms = new PageForms(c.now);
  const first = forms.mintGrant(["a"]);
  assert.equal(first.expiresAt, c.now() + GRANT_TTL_MS);
  c.advance(GRANT_TTL_MS - 1000);
  const taken = forms.take(first.id, first.csrf);
  assert.ok(taken.ok);
  const rotated = forms.mintGrant(["a", "b"], taken.form.expiresAt);
  assert.equal(rotated.expiresAt, first.expiresAt);
  assert.deepEqual([...rotated.ids], ["a", "b"]);
  c.advance(1000);
  assert.deepEqual(forms.take(rotated.id, rotated.csrf), { ok: false, reason: "unknown_form" });
});

Deno.test("a flood of page loads evicts the oldest PIN form, never a grant; an unlock form expires", () => {
  const c = clock();
  const forms = new PageForms(c.now);
  const grant = forms.mintGrant(["a"]);
  const old = forms.mintUnlock();
  for (let i = 0; i < MAX_UNLOCK_FORMS; i++) forms.mintUnlock();
  assert.deepEqual(forms.take(old.id, old.csrf), { ok: false, reason: "unknown_form" });
  assert.ok(forms.take(grant.id, grant.csrf).ok, "the operator's unlocked page survives the flood");
  const late = forms.mintUnlock();
  c.advance(UNLOCK_TTL_MS - 1);
  const still = forms.mintUnlock();
  c.advance(1);
  assert.deepEqual(forms.take(late.id, late.csrf), { ok: false, reason: "unknown_form" });
  assert.ok(forms.take(still.id, still.csrf).ok);
});

Deno.test("an unlock form's token does not open a grant with the same id space", () => {
  const forms = new PageForms(clock().now);
  const unlock = forms.mintUnlock();
  const grant = forms.mintGrant(["a"]);
  assert.deepEqual(forms.take(grant.id, unlock.csrf), { ok: false, reason: "bad_form_token" });
  assert.deepEqual(forms.take(unlock.id, grant.csrf), { ok: false, reason: "bad_form_token" });
  assert.ok(forms.take(grant.id, grant.csrf).ok);
});
