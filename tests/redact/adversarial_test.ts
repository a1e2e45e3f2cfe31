/**
 * Hostile output: megabyte lines built to make a backtracking regex or a
 * rescanning loop go quadratic. Every detector here is linear, so each case
 * finishes in milliseconds; a quadratic one would take minutes and hang the
 * suite, which is the failure this file exists to catch. (Timing itself is
 * measured in bench/redact_bench.ts, not asserted here.)
 */
import assert from "node:assert/strict";
import { compileExtraPattern } from "../../src/config/patterns.ts";
import { base62, makeRedactor } from "./_redactor.ts";

const MIB = 1024 * 1024;
const acme = compileExtraPattern("acme", "ACME-[0-9]{6}", 1);
if (!acme.ok) throw new Error(acme.message);
const redactor = makeRedactor({ entropyFallback: true, extraPatterns: [acme.value] });

/** Equality without a megabyte diff in the failure message. */
function assertSame(actual: string, expected: string): void {
  if (actual === expected) return;
  let i = 0;
  while (i < actual.length && actual[i] === expected[i]) i++;
  assert.fail(
    `lengths ${actual.length} and ${expected.length}, first difference at ${i}: ` +
      `${JSON.stringify(actual.slice(i, i + 60))} vs ${JSON.stringify(expected.slice(i, i + 60))}`,
  );
}

/** `unit` repeated to exactly one MiB. */
function mib(unit: string): string {
  return unit.repeat(Math.ceil(MIB / unit.length)).slice(0, MIB);
}

const UNCHANGED: ReadonlyArray<readonly [string, string]> = [
  ["a line of A", mib("A")],
  ["a line of =", mib("=")],
  ["a line of :", mib(":")],
  ["a line of @", mib("@")],
  ["a line of -", mib("-")],
  ["repeated eyJ", mib("eyJ")],
  ["repeated eyJ with dots", mib("eyJ.")],
  ["repeated ghp_", mib("ghp_")],
  ["repeated sk-", mib("sk-")],
  ["repeated sk-ant-", mib("sk-ant-")],
  ["repeated a://", mib("a://")],
  ["repeated BEGIN markers on one line", mib("-----BEGIN PRIVATE KEY-----")],
  ["repeated BEGIN markers with prose", mib("-----BEGIN PRIVATE KEY-----\nnot a key\n")],
  ["repeated Bearer words", mib("Bearer ")],
  ["repeated partial markers", mib("[REDACTED:")],
  ["repeated --password flags", mib("--password ")],
  ["repeated password: prompts", mib("password:\n")],
  ["repeated \\n escapes", mib("\\n")],
  ["repeated ACME- prefixes", mib("ACME-")],
  ['repeated "password": " (each value empty)', mib('"password": "')],
];

for (const [name, input] of UNCHANGED) {
  Deno.test(`redact() finishes on 1 MiB of ${name}, leaving it unchanged`, () => {
    assertSame(redactor.redact(input), input);
  });
}

Deno.test("redact() finishes on 1 MiB of token=token=..., hiding it as one value", () => {
  const out = redactor.redact(mib("token="));
  assert.equal(out, "token=[REDACTED:secret_assignment]");
});

Deno.test("redact() finishes on 1 MiB of Authorization: repeated, hiding it as one value", () => {
  const out = redactor.redact(mib("Authorization: "));
  assert.equal(out, "Authorization: [REDACTED:secret_assignment]");
});

Deno.test('redact() finishes on 1 MiB of password="x with a quote never closed', () => {
  assertSame(redactor.redact('password="' + mib("x")), 'password="[REDACTED:secret_assignment]');
});

Deno.test('redact() finishes on 1 MiB of password="x repeated (each quote closes the last)', () => {
  const out = redactor.redact(mib('password="x'));
  assert.ok(out.startsWith('password="[REDACTED:secret_assignment]"xpassword="[REDACTED'));
});

Deno.test("redact() finishes on a URL whose userinfo is 1 MiB of p@", () => {
  const out = redactor.redact("postgres://app:" + mib("p@"));
  assert.ok(out.startsWith("postgres://app:[REDACTED:url_credentials]@p@"));
  assert.ok(out.length < MIB);
});

Deno.test("redact() finishes on 1 MiB of URL credentials", () => {
  const out = redactor.redact(mib("x://u:p@h "));
  assert.ok(
    out.startsWith("x://u:[REDACTED:url_credentials]@h x://u:[REDACTED:url_credentials]@h"),
  );
});

Deno.test("redact() finishes on 1 MiB of tokens glued end to end, hiding every one", () => {
  const out = redactor.redact(mib("AKIAIOSFODNN7EXAMPLE--"));
  // The last unit is cut short by the 1 MiB boundary; every whole one is hidden.
  assert.equal(out.includes("AKIAIOSFODNN7EXAMPLE"), false);
  assert.equal(redactor.redact(out), out);
});

Deno.test("redact() finishes on 1 MiB of earlier markers", () => {
  const input = mib("[REDACTED:x] ");
  assertSame(redactor.redact(input), input);
});

Deno.test("redact() finishes on a PEM block with a 1 MiB body", () => {
  const input = "-----BEGIN PRIVATE KEY-----\n" + mib("A");
  assert.equal(redactor.redact(input), "[REDACTED:private_key]");
});

Deno.test("redact() finishes on 1 MiB of random base64, hidden by the entropy fallback", () => {
  assert.equal(redactor.redact(base62(MIB, 3)), "[REDACTED:high_entropy]");
});

Deno.test("redact() finishes on 1 MiB of JWT-shaped runs", () => {
  const part = "eyJ" + "a".repeat(20);
  const out = redactor.redact(mib(`${part}.${part}.`));
  assert.equal(out.includes("eyJa"), false);
});
