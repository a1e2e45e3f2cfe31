/**
 * The audit chain's SHA-256 (`src/audit/sha256.ts`) against the FIPS 180-4
 * examples and against `node:crypto` as the reference: every length from 0
 * to 300 bytes (each padding case: a block with room for the length, one
 * without, exact blocks), streamed in every split, and a million bytes.
 */
import assert from "node:assert/strict";
import { createHash } from "node:crypto";
import { Sha256, sha256Hex } from "../../src/audit/sha256.ts";

const text = (value: string) => new TextEncoder().encode(value);
const reference = (bytes: Uint8Array) => createHash("sha256").update(bytes).digest("hex");

Deno.test("sha256Hex gives the FIPS 180-4 examples' digests", () => {
  assert.equal(
    sha256Hex(text("")),
    "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855",
  );
  assert.equal(
    sha256Hex(text("abc")),
    "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad",
  );
  assert.equal(
    sha256Hex(text("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq")),
    "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1",
  );
  assert.equal(
    sha256Hex(new Uint8Array(1_000_000).fill(0x61)),
    "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0",
  );
});

Deno.test("sha256Hex gives node:crypto's digest for every length from 0 to 300 bytes", () => {
  const bytes = crypto.getRandomValues(new Uint8Array(300));
  for (let length = 0; length <= 300; length++) {
    const message = bytes.subarray(0, length);
    assert.equal(sha256Hex(message), reference(message), `${length} bytes`);
  }
});

Deno.test("Sha256 streamed in any two or three pieces gives the one-shot digest", () => {
  const bytes = crypto.getRandomValues(new Uint8Array(200));
  const whole = reference(bytes);
  for (let first = 0; first <= bytes.length; first += 7) {
    for (let second = first; second <= bytes.length; second += 31) {
      const hash = new Sha256()
        .update(bytes.subarray(0, first))
        .update(bytes.subarray(first, second))
        .update(bytes.subarray(second));
      assert.equal(hash.digestHex(), whole, `split at ${first} and ${second}`);
    }
  }
});

Deno.test("a digested Sha256 refuses more input and a second digest", () => {
  const hash = new Sha256().update(text("abc"));
  hash.digestHex();
  assert.throws(() => hash.update(text("d")), TypeError);
  assert.throws(() => hash.digestHex(), TypeError);
});
