/**
 * `src/encoding/`: unpadded base64url round trips every length and refuses
 * what is not exactly that form (padding, the base64 alphabet, whitespace,
 * an impossible length), as `null`, never a throw.
 */
import assert from "node:assert/strict";
import { Buffer } from "node:buffer";
import { decodeBase64Url, encodeBase64Url } from "../../src/encoding/mod.ts";

Deno.test("encodeBase64Url gives node:buffer's base64url and decodes back, for every length to 100", () => {
  const bytes = crypto.getRandomValues(new Uint8Array(100));
  for (let length = 0; length <= 100; length++) {
    const message = bytes.subarray(0, length);
    const encoded = encodeBase64Url(message);
    assert.equal(encoded, Buffer.from(message).toString("base64url"), `${length} bytes`);
    assert.deepEqual(decodeBase64Url(encoded), new Uint8Array(message), `${length} bytes`);
  }
});

Deno.test("decodeBase64Url refuses padding, the base64 alphabet, whitespace and a length of 4n+1", () => {
  for (const text of ["-_8=", "+/8", "-_ 8", "-_8\n", "abcde", "a", "é"]) {
    assert.equal(decodeBase64Url(text), null, JSON.stringify(text));
  }
  assert.deepEqual(decodeBase64Url(""), new Uint8Array(0));
});
