/**
 * Markers and word edges: a marker is a word boundary on both sides, so
 * redaction must find at the first pass what a second pass would find next to
 * a marker (the cases below are what fuzzing turned up), and text merely
 * shaped like a marker cannot shelter a secret.
 */
import assert from "node:assert/strict";
import { compileExtraPattern } from "../../src/config/patterns.ts";
import { FAKE, makeRedactor, pemBlock } from "./_redactor.ts";

const redactor = makeRedactor();
const entropy = makeRedactor({ entropyFallback: true });

const GLUED: ReadonlyArray<readonly [string, string, string]> = [
  [
    "a token glued after a PEM END line",
    `${pemBlock()}${FAKE.npm}`,
    "[REDACTED:private_key][REDACTED:npm_token]",
  ],
  [
    "a token glued after another token with dashes",
    `${FAKE.awsAccessKeyId}--${FAKE.githubClassic}'`,
    "[REDACTED:aws_access_key_id]--[REDACTED:github_token]'",
  ],
  [
    "a key whose lookahead meets a PEM block",
    `,${FAKE.google}${pemBlock()};`,
    ",[REDACTED:google_api_key][REDACTED:private_key];",
  ],
  [
    "a chain of tokens glued end to end",
    `${FAKE.awsAccessKeyId}--${FAKE.awsAccessKeyId}--${FAKE.awsAccessKeyId}--${FAKE.awsAccessKeyId}--${FAKE.awsAccessKeyId}--${FAKE.awsAccessKeyId}`,
    Array(6).fill("[REDACTED:aws_access_key_id]").join("--"),
  ],
  [
    "a JWT glued between a token and the end",
    `/${FAKE.npm}--${FAKE.jwt}@`,
    "/[REDACTED:npm_token]--[REDACTED:jwt]@",
  ],
  [
    "a token after a JSON \\n escape",
    `"line\\n${FAKE.githubClassic}"`,
    `"line\\n[REDACTED:github_token]"`,
  ],
  [
    "a key name glued to an earlier secret",
    `${FAKE.githubFineGrained}--db_password=abc123 ok`,
    "[REDACTED:github_token]--db_password=[REDACTED:secret_assignment] ok",
  ],
];

for (const [name, input, expected] of GLUED) {
  Deno.test(`redact() finds ${name} at the first pass`, () => {
    const once = redactor.redact(input);
    assert.equal(once, expected);
    assert.equal(redactor.redact(once), once);
    const withEntropy = entropy.redact(input);
    assert.equal(entropy.redact(withEntropy), withEntropy);
  });
}

Deno.test("redact() does not treat marker-shaped text of an unknown kind as a marker", () => {
  assert.equal(
    redactor.redact(`[REDACTED:${FAKE.githubClassic}]`),
    "[REDACTED:[REDACTED:github_token]]",
  );
  assert.equal(
    redactor.redact("[REDACTED: password=hunter2 ]"),
    "[REDACTED: password=[REDACTED:secret_assignment] ]",
  );
  assert.equal(
    redactor.redact("--password [REDACTED:hunter2]"),
    "--password [REDACTED:secret_assignment]",
  );
});

Deno.test("redact() skips values that are markers of its own kinds, including operator names", () => {
  const acme = compileExtraPattern("acme", "ACME-[0-9]{6}", 1);
  assert.ok(acme.ok);
  const withAcme = makeRedactor({ extraPatterns: [acme.value] });
  const text = "password=[REDACTED:acme] token=[REDACTED:github_token] secret=[REDACTED:other]";
  assert.equal(
    withAcme.redact(text),
    "password=[REDACTED:acme] token=[REDACTED:github_token] secret=[REDACTED:secret_assignment]",
  );
  // Without the operator pattern, `acme` is no kind of this redactor.
  assert.equal(
    redactor.redact("password=[REDACTED:acme]"),
    "password=[REDACTED:secret_assignment]",
  );
});
