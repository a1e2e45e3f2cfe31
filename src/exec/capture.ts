/**
 * Bounded capture of one output stream. A command may print gigabytes; we
 * keep only the first `windowBytes` (the cap plus the redaction lookahead)
 * and the last `tailBytes`, and count the rest, so memory stays bounded
 * while the pipe keeps draining (a child blocked on a full pipe would
 * otherwise hang until the timeout).
 *
 * Memory is bounded in the reader too, not only in what is kept: the
 * serving helper's frames are read into one reused buffer
 * (`serving_helper.ts`) and each piece is pushed here and copied, so a 50 MB
 * flood does not leave 50 MB of chunks for the garbage collector to find.
 *
 * @module
 */

/** Size of the one buffer output is read into, and the capture's growth step. */
export const READ_BUFFER_BYTES = 256 * 1024;

/** A capture's first allocation, made at its first byte. */
const FIRST_BYTES = 256;
const EMPTY = new Uint8Array(0);

/**
 * Keeps the first `windowBytes` and the last `tailBytes` of a stream, and
 * counts every byte: the memory one command's output may take is bounded
 * whatever it prints.
 *
 * @example
 * ```ts
 * import { BoundedCapture } from "./capture.ts";
 * const capture = new BoundedCapture(4, 2);
 * capture.push(new TextEncoder().encode("abcdefgh"));
 * capture.totalBytes; // 8
 * new TextDecoder().decode(capture.bytes()); // "abcd"
 * new TextDecoder().decode(capture.tail()); // "gh"
 * ```
 */
export class BoundedCapture {
  readonly #windowBytes: number;
  // Grows by doubling while small, then straight to the window once past
  // the read buffer's size: a call that prints a line costs a line, not a
  // megabyte, and a large output leaves at most READ_BUFFER_BYTES * 2 of
  // outgrown copies for the collector, not another window's worth.
  #head: Uint8Array = EMPTY;
  // Grows the same way up to `#tailBytes` before it first wraps, so a call
  // that prints nothing allocates nothing (every call has a live tail of
  // each stream, for a progress report or a job made of it).
  #tail: Uint8Array = EMPTY;
  readonly #tailBytes: number;
  #kept = 0;
  #total = 0;

  /**
   * Makes an empty capture; its buffers are made at its first byte and grow.
   *
   * @param windowBytes How many leading bytes to keep.
   * @param tailBytes How many trailing bytes to keep as well (for a record at the end).
   * @throws {RangeError} When a size is not a non-negative safe integer.
   */
  constructor(windowBytes: number, tailBytes = 0) {
    for (const n of [windowBytes, tailBytes]) {
      if (!Number.isSafeInteger(n) || n < 0) {
        throw new RangeError(`Capture sizes must be non-negative integers, got ${n}.`);
      }
    }
    this.#windowBytes = windowBytes;
    this.#tailBytes = tailBytes;
  }

  /**
   * Records one chunk; bytes past the window are counted (and the last ones
   * kept in the tail).
   *
   * @param chunk Bytes read from the stream; copied, never held.
   */
  push(chunk: Uint8Array): void {
    const room = this.#windowBytes - this.#kept;
    if (room > 0) {
      const part = chunk.byteLength <= room ? chunk : chunk.subarray(0, room);
      const needed = this.#kept + part.byteLength;
      if (needed > this.#head.byteLength) {
        let size = this.#head.byteLength * 2 || FIRST_BYTES;
        while (size < needed) size *= 2;
        if (size > READ_BUFFER_BYTES) size = this.#windowBytes;
        const grown = new Uint8Array(Math.min(size, this.#windowBytes));
        grown.set(this.#head.subarray(0, this.#kept));
        this.#head = grown;
      }
      this.#head.set(part, this.#kept);
      this.#kept += part.byteLength;
    }
    if (this.#tailBytes > 0) this.#growTail(this.#total + chunk.byteLength);
    const size = this.#tail.byteLength;
    if (size > 0) {
      // A ring indexed by the running total: byte k of the stream lives at k % size.
      const from = Math.max(0, chunk.byteLength - size);
      for (let i = from; i < chunk.byteLength;) {
        const at = (this.#total + i) % size;
        const n = Math.min(size - at, chunk.byteLength - i);
        this.#tail.set(chunk.subarray(i, i + n), at);
        i += n;
      }
    }
    this.#total += chunk.byteLength;
  }

  /**
   * Makes the tail hold `needed` bytes, or all `#tailBytes` of it. Until it
   * is that full it never wrapped, so the stream's bytes lie at their own
   * offsets, which the ring's indexing (k % size) reads the same at any size.
   */
  #growTail(needed: number): void {
    const size = this.#tail.byteLength;
    if (size >= this.#tailBytes || needed <= size) return;
    let grown = size * 2 || FIRST_BYTES;
    while (grown < needed) grown *= 2;
    const tail = new Uint8Array(Math.min(grown, this.#tailBytes));
    tail.set(this.#tail.subarray(0, this.#total));
    this.#tail = tail;
  }

  /** Every byte the stream produced, including discarded ones. */
  get totalBytes(): number {
    return this.#total;
  }

  /** The kept leading bytes (a view, valid until the next push). */
  bytes(): Uint8Array {
    return this.#head.subarray(0, this.#kept);
  }

  /** The last `min(tailBytes, totalBytes)` bytes of the stream, in order (a copy). */
  tail(): Uint8Array {
    const size = this.#tail.byteLength;
    const n = Math.min(size, this.#total);
    const out = new Uint8Array(n);
    for (let i = 0; i < n; i++) out[i] = this.#tail[(this.#total - n + i) % size]!;
    return out;
  }

  /**
   * Forgets the last `n` bytes of the stream (a record the launcher appended,
   * not output of the command): they leave the count and the kept window.
   *
   * @param n How many bytes to forget.
   * @throws {RangeError} When `n` is negative, not an integer, or more than were pushed.
   */
  dropLast(n: number): void {
    if (!Number.isSafeInteger(n) || n < 0 || n > this.#total) {
      throw new RangeError(`Cannot drop ${n} of ${this.#total} bytes.`);
    }
    this.#total -= n;
    this.#kept = Math.min(this.#kept, this.#total);
  }
}
