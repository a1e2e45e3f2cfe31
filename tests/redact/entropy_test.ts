/**
 * The high-entropy fallback: off by default, on by `entropy_fallback`.
 */
import assert from "node:assert/strict";
import { ENTROPY_MIN_LENGTH } from "../../src/redact/mod.ts";
import { base62, FAKE, makeRedactor } from "./_redactor.ts";

const R = "[REDACTED:high_entropy]";
const unknownSecret = base62(40, 99);

Deno.test("redact() leaves an unknown random token alone when the entropy fallback is off", () => {
  const text = `deploy key ${unknownSecret} ok`;
  assert.equal(makeRedactor().redact(text), text);
});

Deno.test("redact() hides an unknown random token when the entropy fallback is on", () => {
  const text = `deploy key ${unknownSecret} ok`;
  assert.equal(makeRedactor({ entropyFallback: true }).redact(text), `deploy key ${R} ok`);
});

Deno.test("redact() with entropy on hides base64 with + / and = padding", () => {
  const b64 = "q8vT3mX9+L2nK7wR4yB6/D1fG5hJ0sAZ9c3Qe1Wp==";
  assert.equal(makeRedactor({ entropyFallback: true }).redact(`x ${b64}`), `x ${R}`);
});

Deno.test("redact() with entropy on ignores random tokens shorter than the threshold", () => {
  const short = FAKE.highEntropy.slice(0, ENTROPY_MIN_LENGTH - 1);
  const text = `id ${short}`;
  assert.equal(makeRedactor({ entropyFallback: true }).redact(text), text);
});

Deno.test("redact() with entropy on judges a token at exactly the threshold length", () => {
  assert.equal(FAKE.highEntropy.length, ENTROPY_MIN_LENGTH);
  assert.equal(makeRedactor({ entropyFallback: true }).redact(`id ${FAKE.highEntropy}`), `id ${R}`);
});

Deno.test("redact() with entropy on keeps the specific kind when a pattern also matches", () => {
  const redactor = makeRedactor({ entropyFallback: true });
  assert.equal(redactor.redact(FAKE.githubClassic), "[REDACTED:github_token]");
});

Deno.test("redact() with entropy on ignores long hex, repeated and word-like tokens", () => {
  const text = [
    "a".repeat(64),
    "0123456789abcdef".repeat(4),
    "ThisIsAVeryLongButOrdinaryIdentifierName",
    "AAAABBBBCCCCDDDDEEEEFFFFGGGGHHHH1234",
  ].join(" ");
  assert.equal(makeRedactor({ entropyFallback: true }).redact(text), text);
});
