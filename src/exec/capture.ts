/**
 * Bounded capture of one output stream. A command may print gigabytes; we
 * keep only the first `windowBytes` (the cap plus the redaction lookahead)
 * and count the rest, so memory stays bounded while the pipe keeps draining
 * (a child blocked on a full pipe would otherwise hang until the timeout).
 *
 * @module
 */

/** Keeps the first `windowBytes` of a stream and counts every byte. */
export class BoundedCapture {
  readonly #windowBytes: number;
  readonly #chunks: Uint8Array[] = [];
  #kept = 0;
  #total = 0;

  /** @param windowBytes How many leading bytes to keep. */
  constructor(windowBytes: number) {
    if (!Number.isSafeInteger(windowBytes) || windowBytes < 0) {
      throw new RangeError(`Capture window must be a non-negative integer, got ${windowBytes}.`);
    }
    this.#windowBytes = windowBytes;
  }

  /** Records one chunk; bytes past the window are counted, then dropped. */
  push(chunk: Uint8Array): void {
    this.#total += chunk.byteLength;
    const room = this.#windowBytes - this.#kept;
    if (room <= 0) return;
    // Copy only what fits: the stream may reuse or keep large buffers alive.
    const part = chunk.byteLength <= room ? chunk : chunk.subarray(0, room);
    this.#chunks.push(part.slice());
    this.#kept += part.byteLength;
  }

  /** Every byte the stream produced, including discarded ones. */
  get totalBytes(): number {
    return this.#total;
  }

  /** The kept leading bytes, joined. */
  bytes(): Uint8Array {
    const out = new Uint8Array(this.#kept);
    let offset = 0;
    for (const chunk of this.#chunks) {
      out.set(chunk, offset);
      offset += chunk.byteLength;
    }
    return out;
  }
}

/**
 * Reads `stream` to its end into `capture`. Resolves when the write end is
 * closed by every holder (the whole tree has exited), the stream errors, or
 * `stop` aborts (the reader is cancelled, which closes our end).
 */
export async function drainInto(
  stream: ReadableStream<Uint8Array>,
  capture: BoundedCapture,
  stop?: AbortSignal,
): Promise<void> {
  const reader = stream.getReader();
  const cancel = () => {
    reader.cancel().catch(() => {});
  };
  stop?.addEventListener("abort", cancel, { once: true });
  try {
    while (true) {
      const { done, value } = await reader.read();
      if (done) return;
      capture.push(value);
    }
  } catch {
    // A read error ends the capture; what was read so far is kept.
  } finally {
    stop?.removeEventListener("abort", cancel);
    reader.releaseLock();
  }
}
