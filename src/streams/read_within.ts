/**
 * Reading a byte stream whole, under a byte limit, without ever holding more
 * than the limit: the one reader behind every HTTP body htmcp accepts (the
 * MCP route and the OAuth endpoints), so there is a single place where a body
 * is counted and cut off.
 *
 * @module
 */
import { concatChunks } from "./_concat.ts";

/** A body read whole within its byte limit, or why it was not. */
export type ReadWithinResult =
  | { readonly ok: true; readonly bytes: Uint8Array }
  | { readonly ok: false; readonly observed: number };

/**
 * Reads `stream` to its end unless it passes `limit` bytes (0 = no limit), in
 * which case reading stops at once and the stream is cancelled.
 *
 * @param stream The body, or null for none (an empty result).
 * @param limit Most bytes accepted; 0 for no limit.
 * @returns The exact bytes, or how many had arrived when the limit was passed.
 * @example
 * ```ts
 * const read = await readWithin(new Response("hello").body, 3);
 * // { ok: false, observed: 5 }
 * ```
 */
export async function readWithin(
  stream: ReadableStream<Uint8Array> | null,
  limit: number,
): Promise<ReadWithinResult> {
  if (stream === null) return { ok: true, bytes: new Uint8Array(0) };
  const chunks: Uint8Array[] = [];
  let total = 0;
  const reader = stream.getReader();
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      total += value.byteLength;
      if (limit !== 0 && total > limit) {
        await reader.cancel().catch(() => {});
        return { ok: false, observed: total };
      }
      chunks.push(value);
    }
  } finally {
    reader.releaseLock();
  }
  const bytes = concatChunks(chunks, total);
  return { ok: true, bytes };
}
