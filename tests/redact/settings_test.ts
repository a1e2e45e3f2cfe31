/**
 * `[redaction] enabled = false`, and idempotence: redacting redacted text
 * changes nothing, so layers that each redact (executor, audit) compose.
 */
import assert from "node:assert/strict";
import { compileExtraPattern } from "../../src/config/patterns.ts";
import { FAKE, makeRedactor, pemBlock } from "./_redactor.ts";

const MIXED = [
  `AWS_ACCESS_KEY_ID=${FAKE.awsAccessKeyId}`,
  `aws_secret_access_key = ${FAKE.awsSecretAccessKey}`,
  `GITHUB_TOKEN=${FAKE.githubClassic}`,
  `openai ${FAKE.openaiProject} anthropic ${FAKE.anthropic}`,
  `Authorization: Bearer ${FAKE.jwt}`,
  `Authorization: Basic dXNlcjpodW50ZXIy`,
  `postgres://app:s3cr3t@db/app`,
  `{"password": "hunter2", "token": "abc"}`,
  `mysql --password hunter2`,
  `AccountKey=${FAKE.azureKey};`,
  `random ${FAKE.highEntropy}`,
  `ACME-123456`,
  pemBlock(),
].join("\n");

Deno.test("redact() returns the text unchanged when redaction is disabled", () => {
  const redactor = makeRedactor({ enabled: false, entropyFallback: true });
  assert.equal(redactor.enabled, false);
  assert.equal(redactor.redact(MIXED), MIXED);
  assert.deepEqual(redactor.findSpans(MIXED), []);
  assert.deepEqual(redactor.redactWithSpans(MIXED), { text: MIXED, spans: [] });
});

Deno.test("redact() is idempotent: a second pass changes nothing (all detectors on)", () => {
  const acme = compileExtraPattern("acme", "ACME-[0-9]{6}", 1);
  assert.ok(acme.ok);
  const redactor = makeRedactor({ entropyFallback: true, extraPatterns: [acme.value] });
  const once = redactor.redact(MIXED);
  assert.notEqual(once, MIXED);
  assert.equal(redactor.redact(once), once);
  assert.equal(redactor.redact(redactor.redact(once)), once);
});

Deno.test("redact() is idempotent with the defaults", () => {
  const redactor = makeRedactor();
  const once = redactor.redact(MIXED);
  assert.equal(redactor.redact(once), once);
});

Deno.test("redact() hides nothing twice and leaves no secret text behind", () => {
  const redactor = makeRedactor({ entropyFallback: true });
  const once = redactor.redact(MIXED);
  for (
    const secret of [
      FAKE.awsAccessKeyId,
      FAKE.awsSecretAccessKey,
      FAKE.githubClassic,
      FAKE.openaiProject,
      FAKE.anthropic,
      FAKE.jwt,
      "dXNlcjpodW50ZXIy",
      "s3cr3t",
      "hunter2",
      FAKE.azureKey,
      FAKE.highEntropy,
      "MIIEow",
    ]
  ) {
    assert.equal(once.includes(secret), false, `"${secret}" survived redaction`);
  }
});

Deno.test("redact() of an empty string is an empty string", () => {
  assert.equal(makeRedactor({ entropyFallback: true }).redact(""), "");
});
