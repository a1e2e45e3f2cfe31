import assert from "node:assert/strict";
import { BoundedCapture, OUTPUT_LOOKAHEAD_BYTES, renderWithRedactor } from "../../src/exec/mod.ts";
import { type RenderedOutput, renderWithRedactorInSlices } from "../../src/exec/output.ts";
import { createRedactor, type Redactor } from "../../src/redact/mod.ts";

const enc = (s: string) => new TextEncoder().encode(s);
/** Redaction off: what is left to prove is the decoding and the cut. */
const plain = createRedactor({ enabled: false, entropyFallback: false, extraPatterns: [] });
const redactor = createRedactor({ enabled: true, entropyFallback: false, extraPatterns: [] });
const AWS_KEY = "AKIAIOSFODNN7EXAMPLE";

/**
 * Both renderings, the synchronous one and the sliced one the executor runs:
 * every behaviour below holds for each.
 */
const RENDERINGS: readonly (readonly [
  string,
  (kept: Uint8Array, total: number, cap: number, r: Redactor) => Promise<RenderedOutput>,
])[] = [
  ["renderWithRedactor()", (...args) => Promise.resolve(renderWithRedactor(...args))],
  ["renderWithRedactorInSlices()", renderWithRedactorInSlices],
];

Deno.test("BoundedCapture keeps only the window and counts every byte", () => {
  const capture = new BoundedCapture(5);
  capture.push(enc("abc"));
  capture.push(enc("defgh"));
  capture.push(enc("ijk"));
  assert.equal(capture.totalBytes, 11);
  assert.equal(new TextDecoder().decode(capture.bytes()), "abcde");
});

Deno.test("BoundedCapture copies chunks, so a reused buffer cannot change what was kept", () => {
  const capture = new BoundedCapture(10);
  const buffer = enc("xyz");
  capture.push(buffer);
  buffer.set(enc("!!!"));
  assert.equal(new TextDecoder().decode(capture.bytes()), "xyz");
});

Deno.test("BoundedCapture keeps every byte in order while its window grows past the read buffer", () => {
  const window = 1024 * 1024 + OUTPUT_LOOKAHEAD_BYTES;
  const capture = new BoundedCapture(window, 1000);
  const stream = new Uint8Array(window + 300_000);
  for (let i = 0; i < stream.length; i++) stream[i] = (i * 7 + (i >> 11)) & 0xff;
  // Chunk sizes that cross each doubling and the jump to the whole window unevenly.
  let at = 0;
  for (let size = 1; at < stream.length; size = (size * 3 + 17) % 300_000 + 1) {
    capture.push(stream.subarray(at, Math.min(at + size, stream.length)));
    at += size;
  }
  assert.equal(capture.totalBytes, stream.length);
  assert.deepEqual(capture.bytes(), stream.subarray(0, window));
  assert.deepEqual(capture.tail(), stream.subarray(stream.length - 1000));
});

Deno.test("BoundedCapture's tail, grown as the stream comes, is exactly its last bytes at every step", () => {
  // Chunk sizes that cross each growth step and the final wrap, from a seeded sequence.
  let seed = 7;
  const next = () => (seed = (Math.imul(seed, 1103515245) + 12345) >>> 0) >>> 8;
  for (const tailBytes of [1, 300, 4096, 16 * 1024]) {
    const capture = new BoundedCapture(0, tailBytes);
    const all: number[] = [];
    assert.deepEqual([...capture.tail()], []);
    for (let step = 0; step < 60; step++) {
      const size = next() % (step % 7 === 6 ? 9000 : 700);
      const chunk = Uint8Array.from({ length: size }, () => next() % 256);
      capture.push(chunk);
      all.push(...chunk);
      assert.deepEqual([...capture.tail()], all.slice(Math.max(0, all.length - tailBytes)));
      assert.equal(capture.totalBytes, all.length);
    }
  }
});

Deno.test("BoundedCapture rejects a negative window", () => {
  assert.throws(() => new BoundedCapture(-1), RangeError);
});

for (const [name, render] of RENDERINGS) {
  Deno.test(`${name} leaves output under the cap whole and unmarked`, async () => {
    assert.deepEqual(await render(enc("hello\n"), 6, 6, plain), {
      text: "hello\n",
      truncated: false,
    });
    assert.deepEqual(await render(enc("ok\n"), 3, 100, redactor), {
      text: "ok\n",
      truncated: false,
    });
  });

  Deno.test(`${name} cuts at the cap and states how many bytes were dropped`, async () => {
    const out = await render(enc("0123456789"), 10, 4, plain);
    assert.equal(out.text, "0123\n[htmcp: output truncated at 4 bytes; 6 of 10 bytes dropped]");
    assert.equal(out.truncated, true);
  });

  Deno.test(`${name} counts the bytes dropped beyond the captured window too`, async () => {
    // What the capture keeps of a long stream: the cap plus the lookahead.
    const cap = 40;
    const kept = enc("a".repeat(cap + OUTPUT_LOOKAHEAD_BYTES));
    const out = await render(kept, 5_000_000, cap, plain);
    assert.equal(
      out.text,
      "a".repeat(cap) +
        `\n[htmcp: output truncated at ${cap} bytes; ${5_000_000 - cap} of 5000000 bytes dropped]`,
    );
    assert.equal(out.truncated, true);
  });

  Deno.test(`${name} never splits a multi-byte character at the cap`, async () => {
    const out = await render(enc("ééé"), 6, 3, plain); // 6 bytes, the cap inside the second
    assert.equal(out.text, "é\n[htmcp: output truncated at 3 bytes; 4 of 6 bytes dropped]");
  });

  Deno.test(`${name} replaces invalid UTF-8 instead of throwing`, async () => {
    const bytes = new Uint8Array([0x61, 0xff, 0xfe, 0x62]);
    assert.deepEqual(await render(bytes, 4, 100, plain), {
      text: "a\uFFFD\uFFFDb",
      truncated: false,
    });
  });

  Deno.test(`${name} redacts before truncating: a secret the cap cuts in the source is replaced whole`, async () => {
    // A marker shorter than the secret, so it fits where the secret did not.
    const short = createRedactor({
      enabled: true,
      entropyFallback: false,
      extraPatterns: [{ name: "k", regex: /SECRET-[0-9]{20}/ }],
    });
    const text = "x".repeat(10) + "SECRET-01234567890123456789" + "tail";
    // The cap falls 15 bytes into the 27-byte secret; its marker is 12 bytes.
    const out = await render(enc(text), text.length, 25, short);
    assert.ok(out.text.startsWith("x".repeat(10) + "[REDACTED:k]ta"), out.text);
    assert.ok(!out.text.includes("SECRET"), out.text);
    assert.equal(out.truncated, true);
  });

  Deno.test(`${name} with the real redactor never shows part of a key straddling the cap`, async () => {
    const text = "x".repeat(10) + " " + AWS_KEY + " tail";
    for (let cap = 11; cap < text.length; cap++) {
      const out = await render(enc(text), text.length, cap, redactor);
      assert.ok(!out.text.includes("AKIA"), `cap ${cap}: ${out.text}`);
      assert.ok(!out.text.includes("EXAMPLE"), `cap ${cap}: ${out.text}`);
    }
  });

  Deno.test(`${name} states the dropped bytes against what the stream produced`, async () => {
    const out = await render(enc("a".repeat(100)), 5_000, 40, redactor);
    assert.equal(out.truncated, true);
    assert.match(out.text, /truncated at 40 bytes; \d+ of 5000 bytes dropped\]$/);
  });
}

Deno.test("the lookahead covers long secrets such as PEM blocks", () => {
  assert.ok(OUTPUT_LOOKAHEAD_BYTES >= 16 * 1024);
});
