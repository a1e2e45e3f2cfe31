/**
 * The per-call view of the text that detectors share.
 *
 * Character loops over a `Uint8Array` run about twice as fast as
 * `charCodeAt` loops over a string, and `TextEncoder.encodeInto` fills one in
 * a fraction of a millisecond per MiB. So detectors that walk characters walk
 * `bytes`: one byte per UTF-16 code unit of the text, ASCII kept as is and
 * every other unit projected to `NON_ASCII`, so an index into `bytes` is an
 * index into `text`. No detector's syntax uses a non-ASCII character.
 *
 * @module
 */
import { markerEndAt } from "./_markers.ts";
import type { ScanInput } from "./types.ts";

/** What every non-ASCII UTF-16 code unit becomes in `ScanInput.bytes`. */
export const NON_ASCII = 0x80;

const encoder = new TextEncoder();

/**
 * A growable scratch buffer owned by one redactor. Redaction is synchronous,
 * so one buffer per redactor is never used by two calls at once.
 */
export class ScratchBuffer {
  #buffer = new Uint8Array(0);

  /** A buffer of at least `length` bytes (contents undefined). */
  take(length: number): Uint8Array {
    if (this.#buffer.length < length) {
      this.#buffer = new Uint8Array(Math.max(length, this.#buffer.length * 2));
    }
    return this.#buffer;
  }
}

/**
 * Projects UTF-8 `utf8[0, written)` in place to one byte per UTF-16 unit.
 * Each sequence shrinks to one byte (two for 4-byte sequences, which are
 * surrogate pairs in UTF-16), so the write index never passes the read index.
 */
function projectInPlace(utf8: Uint8Array, written: number): number {
  let j = 0;
  for (let i = 0; i < written; i++) {
    const b = utf8[i]!;
    if (b < 0x80) utf8[j++] = b;
    else if (b >= 0xc0) {
      utf8[j++] = NON_ASCII;
      if (b >= 0xf0) utf8[j++] = NON_ASCII;
    }
    // 0x80..0xBF: a continuation byte, already accounted for.
  }
  return j;
}

/** Builds the one-byte-per-unit view of `text` in `scratch`. */
function projectText(text: string, scratch: ScratchBuffer): Uint8Array {
  // UTF-8 needs at most 3 bytes per UTF-16 unit (a pair takes 4 for 2 units).
  const buffer = scratch.take(text.length * 3);
  const { written } = encoder.encodeInto(text, buffer);
  if (written === text.length) return buffer.subarray(0, written);
  const length = projectInPlace(buffer, written);
  if (length !== text.length) throw new Error("UTF-16 projection lost track of indices.");
  return buffer.subarray(0, length);
}

/**
 * Wraps `text` so the byte view is built at most once, and only if a detector
 * asks; `kinds` are the marker kinds the redactor can produce.
 */
export function createScanInput(
  text: string,
  scratch: ScratchBuffer,
  kinds: ReadonlySet<string>,
): ScanInput {
  let bytes: Uint8Array | null = null;
  return {
    text,
    bytes: () => (bytes ??= projectText(text, scratch)),
    markerEndAt: (at) => markerEndAt(text, at, kinds),
  };
}
