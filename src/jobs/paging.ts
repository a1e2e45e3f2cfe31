/**
 * Output sized for a model: the head and tail of a long stream with a marker
 * in the middle, and pages of the stored text by UTF-8 byte offset. Both
 * work on text that is already redacted, so no cut can reveal a secret.
 *
 * @module
 */

const encoder = new TextEncoder();
const decoder = new TextDecoder("utf-8", { fatal: false });

/** Any UTF-16 unit past ASCII (surrogates included). */
const NON_ASCII = /[\u0080-\uffff]/;

/** A text addressed by UTF-8 byte offset. */
interface Utf8Text {
  readonly byteLength: number;
  /** `at`, clamped to the text, moved back to the start of the character it falls in. */
  boundary(at: number): number;
  /** Whether byte `at` continues a character (is not the first byte of one). */
  continues(at: number): boolean;
  /** The text of the bytes `[start, end)`, both character boundaries. */
  slice(start: number, end?: number): string;
}

/**
 * `text` by byte offset. Command output is mostly ASCII, whose byte offsets
 * are its character indexes: it is not encoded at all, so cutting a 1 MiB
 * output costs no 1 MiB copy; any other text is encoded once.
 */
function utf8Text(text: string): Utf8Text {
  if (!NON_ASCII.test(text)) {
    return {
      byteLength: text.length,
      boundary: (at) => Math.max(0, Math.min(at, text.length)),
      continues: () => false,
      slice: (start, end) => text.slice(start, end),
    };
  }
  const bytes = encoder.encode(text);
  const continues = (at: number) => ((bytes[at] ?? 0) & 0xc0) === 0x80;
  return {
    byteLength: bytes.byteLength,
    boundary: (at) => {
      let i = Math.max(0, Math.min(at, bytes.byteLength));
      while (i > 0 && i < bytes.byteLength && continues(i)) i--;
      return i;
    },
    continues,
    slice: (start, end) => decoder.decode(bytes.subarray(start, end)),
  };
}

/** A stream cut for the reply. */
export interface InlineText {
  /** The text for the reply: whole, or head, marker and tail. */
  readonly text: string;
  /** Bytes left out of the middle (0 when the whole text fits). */
  readonly cutBytes: number;
}

/**
 * Keeps the first and last halves of `limitBytes` of `text` and puts a
 * marker between them, saying how much was cut and how to read it.
 *
 * @param text Redacted output of one stream.
 * @param limitBytes `limits.inline_output_bytes`.
 * @param pageHint Completes the marker: how to page the cut part, given its offset and length.
 * @returns The text to show and how many bytes were left out.
 *
 * @example
 * ```ts
 * import { headAndTail } from "./mod.ts";
 * const cut = headAndTail("a".repeat(100), 20, (offset, length) =>
 *   `read them with job_output offset=${offset} limit=${length}`);
 * cut.cutBytes; // 80
 * cut.text; // "aaaaaaaaaa\n[htmcp: 80 of 100 bytes cut here; read them with ...]\naaaaaaaaaa"
 * ```
 */
export function headAndTail(
  text: string,
  limitBytes: number,
  pageHint: (offset: number, length: number) => string,
): InlineText {
  const bytes = utf8Text(text);
  if (bytes.byteLength <= limitBytes) return { text, cutBytes: 0 };
  const headEnd = bytes.boundary(Math.floor(limitBytes / 2));
  const tailStart = bytes.boundary(bytes.byteLength - (limitBytes - headEnd));
  const cut = tailStart - headEnd;
  const marker = `\n[htmcp: ${cut} of ${bytes.byteLength} bytes cut here; ${
    pageHint(headEnd, cut)
  }]\n`;
  return { text: bytes.slice(0, headEnd) + marker + bytes.slice(tailStart), cutBytes: cut };
}

/** One page of stored output. */
export interface Page {
  /** The page's text (whole characters only). */
  readonly text: string;
  /** Where the page starts, in UTF-8 bytes (the asked offset, moved back to a character start). */
  readonly offset: number;
  /** Where the next page starts, or null at the end. */
  readonly nextOffset: number | null;
  /** The whole stored text's length in UTF-8 bytes. */
  readonly totalBytes: number;
}

/**
 * The bytes `[offset, offset + limit)` of `text`, both ends moved back to a
 * character boundary (a page never splits a character; the next page starts
 * where this one stopped).
 *
 * @param text The stored (redacted) output of one stream.
 * @param offset The first byte wanted.
 * @param limit How many bytes at most (a page holds at least one character).
 *
 * @example
 * ```ts
 * import { pageOf } from "./mod.ts";
 * const first = pageOf("héllo", 0, 2); // { text: "h", offset: 0, nextOffset: 1, totalBytes: 6 }
 * const next = pageOf("héllo", first.nextOffset ?? 0, 2); // text "é": never half of it
 * ```
 */
export function pageOf(text: string, offset: number, limit: number): Page {
  const bytes = utf8Text(text);
  const start = bytes.boundary(offset);
  let end = bytes.boundary(start + limit);
  // A limit smaller than one character still makes progress.
  if (end === start && start < bytes.byteLength) {
    end = start + 1;
    while (end < bytes.byteLength && bytes.continues(end)) end++;
  }
  return {
    text: bytes.slice(start, end),
    offset: start,
    nextOffset: end >= bytes.byteLength ? null : end,
    totalBytes: bytes.byteLength,
  };
}

/** `text` cut to at most `limitBytes` UTF-8 bytes at a character boundary, with a marker. */
export function capStored(text: string, limitBytes: number): string {
  const bytes = utf8Text(text);
  if (bytes.byteLength <= limitBytes) return text;
  const end = bytes.boundary(limitBytes);
  return bytes.slice(0, end) +
    `\n[htmcp: stored output cut at limits.job_output_bytes = ${limitBytes}; ${
      bytes.byteLength - end
    } bytes not kept]`;
}
