/**
 * A byte budget shared by every request body being read at once.
 *
 * Threat: many clients each sending a body just under the per-request limit
 * at the same time. Each is within bounds, but together they hold memory
 * without bound (8 concurrent 15 MB bodies peaked at 536 MiB). Every body
 * reader takes its bytes from one budget as they arrive; a body that would
 * overdraw it is cut off at once and refused as "busy", and the bytes come
 * back when the request has been handled.
 *
 * @module
 */
import { concatChunks } from "./_concat.ts";

/** A pool of bytes that readers take from and give back. */
export class ByteBudget {
  /** Bytes in the pool; 0 means unlimited. */
  readonly total: number;
  #free: number;

  /**
   * Creates the pool.
   *
   * @param total Bytes in the pool; 0 means unlimited.
   */
  constructor(total: number) {
    if (!Number.isInteger(total) || total < 0) {
      throw new RangeError(`total must be a non-negative integer, got ${total}`);
    }
    this.total = total;
    this.#free = total;
  }

  /** Bytes not taken. */
  get free(): number {
    return this.#free;
  }

  /** Takes `bytes`; false (and nothing taken) when the pool has fewer free. */
  take(bytes: number): boolean {
    if (this.total === 0) return true;
    if (bytes > this.#free) return false;
    this.#free -= bytes;
    return true;
  }

  /** Gives back bytes taken before. */
  give(bytes: number): void {
    if (this.total === 0) return;
    this.#free = Math.min(this.total, this.#free + bytes);
  }
}

/** A body read within the pool (give the bytes back with `release`), or why it was not. */
export type BudgetedReadResult =
  | { readonly ok: true; readonly bytes: Uint8Array; readonly release: () => void }
  | { readonly ok: false; readonly reason: "too_large" | "busy"; readonly observed: number };

/**
 * Reads `stream` whole under a per-request `limit` (0 = none) and the shared
 * `budget`. On success the bytes stay taken until `release()`.
 */
export async function readWithinBudget(
  stream: ReadableStream<Uint8Array> | null,
  limit: number,
  budget: ByteBudget,
): Promise<BudgetedReadResult> {
  if (stream === null) return { ok: true, bytes: new Uint8Array(0), release: () => {} };
  const chunks: Uint8Array[] = [];
  let total = 0;
  const reader = stream.getReader();
  const fail = async (reason: "too_large" | "busy") => {
    budget.give(total);
    await reader.cancel().catch(() => {});
    return { ok: false, reason, observed: total } as const;
  };
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      if (limit !== 0 && total + value.byteLength > limit) {
        total += value.byteLength;
        budget.give(total - value.byteLength);
        await reader.cancel().catch(() => {});
        return { ok: false, reason: "too_large", observed: total };
      }
      if (!budget.take(value.byteLength)) return await fail("busy");
      total += value.byteLength;
      chunks.push(value);
    }
  } finally {
    reader.releaseLock();
  }
  const bytes = concatChunks(chunks, total);
  let released = false;
  return {
    ok: true,
    bytes,
    release: () => {
      if (released) return;
      released = true;
      budget.give(total);
    },
  };
}
