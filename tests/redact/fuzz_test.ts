/**
 * Seeded, deterministic fuzzing: random mixtures of credentials, key/value
 * syntax, separators and prose. Redaction must be idempotent on every one,
 * and a credential set apart by whitespace must never survive, whatever is
 * around it.
 */
import assert from "node:assert/strict";
import { compileExtraPattern } from "../../src/config/patterns.ts";
import { FAKE, makeRedactor, pemBlock } from "./_redactor.ts";

const acme = compileExtraPattern("acme", "ACME-[0-9]{6}", 1);
if (!acme.ok) throw new Error(acme.message);

const SECRETS: readonly string[] = [
  FAKE.awsAccessKeyId,
  FAKE.githubClassic,
  FAKE.githubFineGrained,
  FAKE.gitlab,
  FAKE.slack,
  FAKE.stripeLive,
  FAKE.openaiProject,
  FAKE.anthropic,
  FAKE.google,
  FAKE.npm,
  FAKE.pypi,
  FAKE.jwt,
  pemBlock(),
  "ACME-123456",
];

/** Syntax and prose that surround credentials, with no credential of their own. */
const FILLER: readonly string[] = [
  "password=",
  "token: ",
  '"secret": "',
  "--password ",
  "Authorization: Bearer ",
  "Authorization: ",
  "postgres://u:",
  "@host/db",
  "AccountKey=",
  "[REDACTED:",
  "]",
  "-----BEGIN PRIVATE KEY-----",
  "-----END PRIVATE KEY-----",
  "\\n",
  "eyJ",
  "sk-",
  "hunter2",
  "the quick brown fox",
  "/usr/lib/x86_64-linux-gnu",
  "3f786850e387550fdab836ed7e6dc881de23001b",
  "é🔑",
  "{",
  "[",
  "${",
  "$(",
  "}",
  "auth",
  "[REDACTED:acme]",
  "[REDACTED:x]",
  // Renderings: colour escapes, line prefixes, a reordered key's lines.
  "\x1b[01;31m\x1b[K",
  "\x1b[m\x1b[K",
  "\x1b]8;;https://u:pw@h/\x1b\\",
  "keys/id:12:",
  "keys/id-3-",
  "     7\t",
  "> ",
  "MIIEowIBAAKCAQEAu1SU1LfVLPHCozMxH2Mo4lgOEePzNm0tRgeLezV6ffAt0gun",
];
const PIECES: readonly string[] = [...SECRETS, ...FILLER];
const GLUE: readonly string[] = [" ", "\n", "=", ":", '"', "'", ",", ";", "@", "/", "--", "", "\t"];

function rng(seed: number): () => number {
  let x = seed >>> 0 || 1;
  return () => {
    x ^= x << 13;
    x ^= x >>> 17;
    x ^= x << 5;
    return (x >>> 0) / 4294967296;
  };
}

function pick<T>(random: () => number, items: readonly T[]): T {
  return items[Math.floor(random() * items.length)]!;
}

const redactors = [
  makeRedactor(),
  makeRedactor({ entropyFallback: true, extraPatterns: [acme.value] }),
];

Deno.test("redact() is idempotent on 400 random mixtures of secrets, syntax and prose", () => {
  for (let seed = 1; seed <= 400; seed++) {
    const random = rng(seed);
    let text = "";
    const count = 1 + Math.floor(random() * 30);
    for (let i = 0; i < count; i++) text += pick(random, PIECES) + pick(random, GLUE);
    for (const redactor of redactors) {
      const once = redactor.redact(text);
      assert.equal(redactor.redact(once), once, `seed ${seed}: ${JSON.stringify(text)}`);
    }
  }
});

Deno.test("redact() never lets a whitespace-delimited credential through, whatever surrounds it", () => {
  for (let seed = 1; seed <= 300; seed++) {
    const random = rng(seed * 7919);
    const parts: string[] = [];
    const placed: string[] = [];
    for (let i = 0; i < 12; i++) {
      if (random() < 0.4) {
        const secret = pick(random, SECRETS);
        placed.push(secret);
        parts.push(` ${secret}\n`);
      } else {
        parts.push(pick(random, FILLER) + pick(random, GLUE));
      }
    }
    const text = parts.join("");
    for (const [index, redactor] of redactors.entries()) {
      const out = redactor.redact(text);
      for (const secret of placed) {
        // The operator pattern is configured on the second redactor only.
        if (index === 0 && secret.startsWith("ACME-")) continue;
        // The first 12 characters of any credential are already identifying.
        const probe = secret.slice(0, 12);
        assert.ok(!out.includes(probe), `seed ${seed}: ${JSON.stringify(probe)} survived`);
      }
    }
  }
});
