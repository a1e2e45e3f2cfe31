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
