import assert from "node:assert/strict";
import {
  BoundedCapture,
  OUTPUT_LOOKAHEAD_BYTES,
  renderOutput,
  renderWithRedactor,
} from "../../src/exec/mod.ts";
import { createRedactor } from "../../src/redact/mod.ts";

const enc = (s: string) => new TextEncoder().encode(s);
const identity = (s: string) => s;
const redactKey = (s: string) => s.replace(/AKIA[0-9A-Z]{16}/g, "[REDACTED:aws_access_key_id]");

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

Deno.test("BoundedCapture rejects a negative window", () => {
  assert.throws(() => new BoundedCapture(-1), RangeError);
});

Deno.test("renderOutput() leaves output under the cap whole and unmarked", () => {
  const out = renderOutput(enc("hello\n"), 6, 6, identity);
  assert.deepEqual(out, { text: "hello\n", truncated: false });
});

Deno.test("renderOutput() cuts at the cap and states how many bytes were dropped", () => {
  const out = renderOutput(enc("0123456789"), 1_000, 4, identity);
  assert.equal(out.truncated, true);
  assert.ok(out.text.startsWith("0123\n"));
  assert.match(out.text, /truncated at 4 bytes; 996 of 1000 bytes dropped/);
});

Deno.test("renderOutput() redacts before truncating: a key straddling the cap is never half-shown", () => {
  const key = "AKIAABCDEFGHIJKLMNOP";
  const text = "x".repeat(10) + key + "tail";
  // The cap falls in the middle of the key.
  const out = renderOutput(enc(text), text.length, 18, redactKey);
  assert.equal(out.truncated, true);
  assert.ok(!out.text.includes("AKIA"), out.text);
  assert.ok(out.text.startsWith("x".repeat(10) + "[REDACTED:aws_access_key_id]"), out.text);
});

Deno.test("renderOutput() never splits a multi-byte character at the cap", () => {
  const text = "ééé"; // 6 bytes
  const out = renderOutput(enc(text), 6, 3, identity);
  assert.ok(out.text.startsWith("é\n"), JSON.stringify(out.text));
  assert.ok(!out.text.includes("\uFFFD"));
});

Deno.test("renderOutput() replaces invalid UTF-8 instead of throwing", () => {
  const bytes = new Uint8Array([0x61, 0xff, 0xfe, 0x62]);
  const out = renderOutput(bytes, 4, 100, identity);
  assert.equal(out.text, "a\uFFFD\uFFFDb");
});

Deno.test("the lookahead covers long secrets such as PEM blocks", () => {
  assert.ok(OUTPUT_LOOKAHEAD_BYTES >= 16 * 1024);
});

const redactor = createRedactor({ enabled: true, entropyFallback: false, extraPatterns: [] });
const AWS_KEY = "AKIAIOSFODNN7EXAMPLE";

Deno.test("renderWithRedactor() with the real redactor never shows part of a key straddling the cap", () => {
  const text = "x".repeat(10) + " " + AWS_KEY + " tail";
  for (let cap = 11; cap < text.length; cap++) {
    const out = renderWithRedactor(enc(text), text.length, cap, redactor);
    assert.ok(!out.text.includes("AKIA"), `cap ${cap}: ${out.text}`);
    assert.ok(!out.text.includes("EXAMPLE"), `cap ${cap}: ${out.text}`);
  }
});

Deno.test("renderWithRedactor() states the dropped bytes against what the stream produced", () => {
  const out = renderWithRedactor(enc("a".repeat(100)), 5_000, 40, redactor);
  assert.equal(out.truncated, true);
  assert.match(out.text, /truncated at 40 bytes; \d+ of 5000 bytes dropped\]$/);
});

Deno.test("renderWithRedactor() leaves short clean output alone", () => {
  assert.deepEqual(renderWithRedactor(enc("ok\n"), 3, 100, redactor), {
    text: "ok\n",
    truncated: false,
  });
});
