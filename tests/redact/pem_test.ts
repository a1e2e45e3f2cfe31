/**
 * PEM private-key blocks: hidden whole, across lines, in every container a
 * key is printed in, including a block cut before its END line.
 */
import assert from "node:assert/strict";
import { makeRedactor, PEM_BODY, pemBlock } from "./_redactor.ts";

const redactor = makeRedactor();
const R = "[REDACTED:private_key]";

for (
  const label of [
    "PRIVATE KEY",
    "RSA PRIVATE KEY",
    "EC PRIVATE KEY",
    "OPENSSH PRIVATE KEY",
    "ENCRYPTED PRIVATE KEY",
    "PGP PRIVATE KEY BLOCK",
  ]
) {
  Deno.test(`redact() hides a multi-line "${label}" block whole`, () => {
    assert.equal(redactor.redact(`key:\n${pemBlock(label)}\ndone`), `key:\n${R}\ndone`);
  });
}

Deno.test("redact() hides a PEM block with CRLF line ends and indentation", () => {
  const indented = pemBlock().split("\n").map((line) => `    ${line}`).join("\r\n");
  assert.equal(redactor.redact(`k: |\r\n${indented}\r\nnext`), `k: |\r\n    ${R}\r\nnext`);
});

Deno.test("redact() hides an encrypted PEM block with RFC 1421 headers", () => {
  const block = [
    "-----BEGIN RSA PRIVATE KEY-----",
    "Proc-Type: 4,ENCRYPTED",
    "DEK-Info: AES-128-CBC,6A87D3E9E4D3B1C5A5B1E0B3F0E4C1D2",
    "",
    ...PEM_BODY,
    "-----END RSA PRIVATE KEY-----",
  ].join("\n");
  assert.equal(redactor.redact(`${block}\n$ `), `${R}\n$ `);
});

Deno.test("redact() hides a PEM block inside a JSON string with \\n escapes, as the key's value", () => {
  const escaped = pemBlock("PRIVATE KEY", "\\n") + "\\n";
  const json = `{"type": "service_account", "private_key": "${escaped}", "client_email": "x@y"}`;
  const out = redactor.redact(json);
  assert.equal(
    out,
    `{"type": "service_account", "private_key": "${R}", "client_email": "x@y"}`,
  );
});

Deno.test("redact() follows \\n escapes through a PEM block under a key of any name", () => {
  const escaped = pemBlock("PRIVATE KEY", "\\n") + "\\n";
  assert.equal(redactor.redact(`{"k": "${escaped}"}`), `{"k": "${R}\\n"}`);
});

Deno.test("redact() hides a PEM block cut before its END line (output cap, head -c)", () => {
  const cut = pemBlock().slice(0, pemBlock().indexOf("-----END") - 10);
  assert.equal(redactor.redact(`$ head -c 200 id_rsa\n${cut}`), `$ head -c 200 id_rsa\n${R}`);
});

Deno.test("redact() hides a PEM block cut inside its END line", () => {
  const block = pemBlock();
  const cut = block.slice(0, block.length - 8);
  assert.equal(redactor.redact(cut), R);
});

Deno.test("redact() ends a cut PEM block at the first line that is not key material", () => {
  const cut = ["-----BEGIN PRIVATE KEY-----", ...PEM_BODY.slice(0, 2)].join("\n");
  assert.equal(redactor.redact(`${cut}\nerror: read truncated\n`), `${R}\nerror: read truncated\n`);
});

Deno.test("redact() hides a one-line PEM key squeezed into an environment variable", () => {
  const line = `KEY="-----BEGIN PRIVATE KEY-----${PEM_BODY.join("")}-----END PRIVATE KEY-----"`;
  assert.equal(redactor.redact(line), `KEY="${R}"`);
});

Deno.test("redact() keeps text between two separate PEM blocks", () => {
  const two = `${pemBlock()}\nbetween\n${pemBlock("EC PRIVATE KEY")}`;
  assert.equal(redactor.redact(two), `${R}\nbetween\n${R}`);
});

Deno.test("redact() leaves a BEGIN line with no key material after it alone", () => {
  const text = "-----BEGIN PRIVATE KEY-----\nthis is documentation, not a key.\n";
  assert.equal(redactor.redact(text), text);
});
