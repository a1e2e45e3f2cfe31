/**
 * Redaction before truncation: a secret straddling the output cap is never
 * half-shown, a marker is never cut, the UTF-8 cap holds exactly, and a
 * secret cut short by the end of the capture window never surfaces.
 */
import assert from "node:assert/strict";
import {
  redactAndTruncate,
  REDACTION_LOOKAHEAD_BYTES,
  utf8ByteLength,
} from "../../src/redact/mod.ts";
import { FAKE, makeRedactor, PEM_BODY } from "./_redactor.ts";

const redactor = makeRedactor();
const KEY = FAKE.awsAccessKeyId;
const MARKER = "[REDACTED:aws_access_key_id]";

Deno.test("redactAndTruncate() returns short output whole and not truncated", () => {
  const out = redactAndTruncate(redactor, `id ${KEY} é`, 1000, false);
  assert.deepEqual(out, {
    text: `id ${MARKER} é`,
    truncated: false,
    keptBytes: utf8ByteLength(`id ${MARKER} é`),
    sourceBytes: utf8ByteLength(`id ${KEY} é`),
  });
});

Deno.test("redactAndTruncate() cuts plain output at exactly the byte limit", () => {
  const out = redactAndTruncate(redactor, "0123456789", 4, false);
  assert.deepEqual(out, { text: "0123", truncated: true, keptBytes: 4, sourceBytes: 4 });
});

Deno.test("redactAndTruncate() shows nothing of a secret that straddles the limit", () => {
  const text = "x".repeat(9) + " " + KEY + " " + "y".repeat(100);
  for (let limit = 11; limit < 10 + MARKER.length; limit++) {
    const out = redactAndTruncate(redactor, text, limit, false);
    assert.equal(out.text, "x".repeat(9) + " ", `limit ${limit}`);
    assert.equal(out.truncated, true);
    assert.equal(out.keptBytes, 10);
    assert.equal(out.sourceBytes, 10);
  }
});

Deno.test("redactAndTruncate() keeps a whole marker when it fits under the limit", () => {
  const text = "x".repeat(9) + " " + KEY + " " + "y".repeat(100);
  const limit = 10 + MARKER.length + 3;
  const out = redactAndTruncate(redactor, text, limit, false);
  assert.equal(out.text, "x".repeat(9) + " " + MARKER + " yy");
  assert.equal(out.keptBytes, limit);
  assert.equal(out.sourceBytes, 10 + KEY.length + 3);
});

Deno.test("redactAndTruncate() never splits a UTF-8 character or a surrogate pair", () => {
  const accents = redactAndTruncate(redactor, "é".repeat(10), 5, false);
  assert.deepEqual(accents, { text: "éé", truncated: true, keptBytes: 4, sourceBytes: 4 });
  const keys = redactAndTruncate(redactor, "🔑".repeat(3), 7, false);
  assert.deepEqual(keys, { text: "🔑", truncated: true, keptBytes: 4, sourceBytes: 4 });
});

Deno.test("redactAndTruncate() at every limit: under the cap, a prefix, no marker cut, no secret prefix", () => {
  const secrets = [KEY, FAKE.githubClassic, "hunter2", FAKE.jwt];
  const text =
    `a ${KEY} b\nGITHUB_TOKEN=${FAKE.githubClassic}\npassword=hunter2 é🔑\nt ${FAKE.jwt} end`;
  const full = redactor.redact(text);
  for (let limit = 0; limit <= utf8ByteLength(full) + 2; limit++) {
    const out = redactAndTruncate(redactor, text, limit, false);
    assert.ok(utf8ByteLength(out.text) <= limit, `limit ${limit}: over the cap`);
    assert.equal(out.keptBytes, utf8ByteLength(out.text));
    assert.ok(full.startsWith(out.text), `limit ${limit}: not a prefix`);
    const opened = out.text.split("[REDACTED:").length - 1;
    const closed = (out.text.match(/\[REDACTED:[a-z_]+\]/g) ?? []).length;
    assert.equal(opened, closed, `limit ${limit}: a marker was cut`);
    assert.ok(!out.text.endsWith("["), `limit ${limit}: ends in a marker`);
    for (const secret of secrets) {
      assert.ok(!out.text.includes(secret.slice(0, 4)), `limit ${limit}: part of ${secret} shown`);
    }
    assert.equal(out.truncated, out.text.length < full.length);
  }
});

/** A private key larger than the lookahead, so redaction shrinks the window a lot. */
function hugePem(): string {
  const lines: string[] = ["-----BEGIN RSA PRIVATE KEY-----"];
  while (lines.length * 64 < REDACTION_LOOKAHEAD_BYTES + 16 * 1024) {
    lines.push(PEM_BODY[lines.length % 3]!);
  }
  lines.push("-----END RSA PRIVATE KEY-----");
  return lines.join("\n");
}

Deno.test("redactAndTruncate() drops the window's tail when it was cut, so a cut-short secret never shows", () => {
  // The window ends in the first 10 characters of a key id: too short for
  // any detector. The PEM block shrinks to a marker, which without the tail
  // rule would pull that fragment under the cap.
  const window = `head\n${hugePem()}\nAKIAIOSFOD`;
  const out = redactAndTruncate(redactor, window, 1024 * 1024, true);
  assert.equal(out.truncated, true);
  assert.ok(!out.text.includes("AKIA"), "a cut-short key id surfaced");
  // The margin boundary falls inside the PEM block: its marker is dropped too.
  assert.equal(out.text, "head\n");
  assert.equal(out.sourceBytes, 5);
});

Deno.test("redactAndTruncate() keeps the tail when the stream really ended there", () => {
  const window = `head\n${hugePem()}\nAKIAIOSFOD`;
  const out = redactAndTruncate(redactor, window, 1024 * 1024, false);
  assert.equal(out.text, "head\n[REDACTED:private_key]\nAKIAIOSFOD");
  assert.equal(out.truncated, false);
});

Deno.test("redactAndTruncate() with a cut window keeps everything before the tail margin", () => {
  const body = "line of output\n".repeat(100);
  const window = body + "z".repeat(REDACTION_LOOKAHEAD_BYTES);
  const out = redactAndTruncate(redactor, window, 1024 * 1024, true);
  assert.equal(out.text, body);
  assert.equal(out.sourceBytes, body.length);
  assert.equal(out.truncated, true);
});

Deno.test("redactAndTruncate() with redaction disabled only cuts", () => {
  const disabled = makeRedactor({ enabled: false });
  const out = redactAndTruncate(disabled, `${KEY} tail`, 8, false);
  assert.deepEqual(out, { text: KEY.slice(0, 8), truncated: true, keptBytes: 8, sourceBytes: 8 });
});

Deno.test("redactAndTruncate() with a zero limit returns nothing", () => {
  assert.deepEqual(redactAndTruncate(redactor, "abc", 0, false), {
    text: "",
    truncated: true,
    keptBytes: 0,
    sourceBytes: 0,
  });
});

Deno.test("redactAndTruncate() refuses a negative or fractional limit", () => {
  assert.throws(() => redactAndTruncate(redactor, "abc", -1, false), RangeError);
  assert.throws(() => redactAndTruncate(redactor, "abc", 1.5, false), RangeError);
});
