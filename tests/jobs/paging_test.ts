/**
 * Output sized for a model: head and tail with a marker that says how much
 * was cut and where, pages that never split a character and cover the text
 * exactly, and progress tails bounded in lines and bytes.
 */
import { equal, ok } from "node:assert/strict";
import { capStored, headAndTail, lastLines, pageOf } from "../../src/jobs/mod.ts";

const bytes = (text: string) => new TextEncoder().encode(text).byteLength;

Deno.test("headAndTail() leaves text within the limit untouched", () => {
  const kept = headAndTail("short\n", 64, () => "unused");
  equal(kept.text, "short\n");
  equal(kept.cutBytes, 0);
});

Deno.test("headAndTail() keeps both ends and names the cut part's offset and length", () => {
  const text = "a".repeat(100) + "MIDDLE" + "z".repeat(100);
  const cut = headAndTail(text, 100, (offset, length) => `page ${offset}+${length}`);
  ok(cut.text.startsWith("a".repeat(50)));
  ok(cut.text.endsWith("z".repeat(50)));
  equal(cut.text.includes("MIDDLE"), false);
  equal(cut.cutBytes, 106);
  ok(cut.text.includes("[htmcp: 106 of 206 bytes cut here; page 50+106]"), cut.text);
  // The named range is exactly what is missing.
  equal(text.slice(0, 50) + text.slice(50, 156) + text.slice(156), text);
});

Deno.test("headAndTail() never splits a multi-byte character", () => {
  const text = "é".repeat(300);
  const cut = headAndTail(text, 101, () => "x");
  equal(cut.text.includes("\uFFFD"), false);
});

Deno.test("pageOf() pages cover the text exactly, with character-safe ends", () => {
  const text = "ü1ü2ü3ü4ü5".repeat(50);
  let rebuilt = "";
  let offset: number | null = 0;
  let pages = 0;
  while (offset !== null) {
    const page = pageOf(text, offset, 7);
    equal(page.totalBytes, bytes(text));
    ok(bytes(page.text) <= 7 && bytes(page.text) > 0);
    rebuilt += page.text;
    offset = page.nextOffset;
    pages++;
  }
  equal(rebuilt, text);
  ok(pages > 10);
});

Deno.test("pageOf() moves an offset inside a character back to its start", () => {
  const page = pageOf("aéb", 2, 10);
  equal(page.offset, 1);
  equal(page.text, "éb");
  equal(page.nextOffset, null);
});

Deno.test("pageOf() past the end is an empty last page", () => {
  const page = pageOf("abc", 99, 10);
  equal(page.text, "");
  equal(page.nextOffset, null);
});

Deno.test("capStored() cuts at limits.job_output_bytes and says so", () => {
  equal(capStored("abc", 3), "abc");
  const capped = capStored("abcdef", 4);
  ok(capped.startsWith("abcd\n[htmcp: stored output cut at limits.job_output_bytes = 4; 2 bytes"));
});

Deno.test("lastLines() keeps the last lines within the byte bound", () => {
  const text = Array.from({ length: 30 }, (_, i) => `line ${i}`).join("\n") + "\n";
  equal(lastLines(text, 3, 1024), "line 27\nline 28\nline 29");
  const long = lastLines("x".repeat(5000), 10, 1024);
  equal(bytes(long), 1024);
});

/** `at` in `all`, moved back to a character's first byte. */
function back(all: Uint8Array, at: number): number {
  let i = Math.max(0, Math.min(at, all.byteLength));
  while (i > 0 && i < all.byteLength && ((all[i] ?? 0) & 0xc0) === 0x80) i--;
  return i;
}

/** The cuts computed on the encoded bytes, as a reference for both ways the module takes. */
function referenceHeadAndTail(text: string, limit: number): string {
  const all = new TextEncoder().encode(text);
  if (all.byteLength <= limit) return text;
  const head = back(all, Math.floor(limit / 2));
  const tail = back(all, all.byteLength - (limit - head));
  const decode = (from: number, to?: number) => new TextDecoder().decode(all.subarray(from, to));
  return `${decode(0, head)}\n[htmcp: ${tail - head} of ${all.byteLength} bytes cut here; ${head}+${
    tail - head
  }]\n${decode(tail)}`;
}

Deno.test("headAndTail(), pageOf() and capStored() cut ASCII and other text at the same byte offsets", () => {
  const texts = [
    Array.from({ length: 5000 }, (_, i) => `${i}\n`).join(""),
    // The same, but one character past ASCII (at the very end): the encoded way.
    Array.from({ length: 5000 }, (_, i) => `${i}\n`).join("") + "é",
    "ab😀cd".repeat(400),
    "\u0000\u007f".repeat(700),
  ];
  for (const text of texts) {
    for (const limit of [1, 2, 3, 101, 1000, 4096]) {
      equal(
        headAndTail(text, limit, (offset, length) => `${offset}+${length}`).text,
        referenceHeadAndTail(text, limit),
      );
      const page = pageOf(text, 777, limit);
      const all = new TextEncoder().encode(text);
      equal(page.totalBytes, all.byteLength);
      equal(
        new TextEncoder().encode(page.text).byteLength,
        (page.nextOffset ?? all.byteLength) - page.offset,
      );
      equal(
        new TextDecoder().decode(all.subarray(page.offset, page.nextOffset ?? undefined)),
        page.text,
      );
      const storedEnd = back(all, limit);
      equal(
        capStored(text, limit),
        all.byteLength <= limit ? text : new TextDecoder().decode(all.subarray(0, storedEnd)) +
          `\n[htmcp: stored output cut at limits.job_output_bytes = ${limit}; ${
            all.byteLength - storedEnd
          } bytes not kept]`,
      );
    }
  }
});
