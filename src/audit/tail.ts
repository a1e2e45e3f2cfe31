/**
 * Reads the end of an existing audit log so the chain continues from its last
 * complete record, and finds the damage a cut-off write leaves behind.
 *
 * Only the tail is read (backwards, in chunks), so opening a large log costs
 * the size of its last line, not of the file.
 *
 * A write cut short (kill -9 or power loss mid-write, a full disk) leaves bytes
 * after the last complete record. They are never truncated away: the log is
 * append-only and the bytes are evidence. The writer instead ends them with a
 * newline and writes a `chain_reset` record whose `prev` is their SHA-256.
 * At most one damaged line plus one unterminated fragment is accepted (what a
 * failed repair write can itself leave); anything more, or a non-empty file
 * with no record at all, is refused, so htmcp never appends to a file that is
 * not its own log.
 *
 * @module
 */

import { concatBytes, type ParsedLine, parseRecordLine, sha256Hex } from "./line.ts";
import { GENESIS_HASH } from "./records.ts";

const CHUNK_BYTES = 64 * 1024;
const FIRST_CHUNK_BYTES = 8 * 1024;
const MAX_TAIL_BYTES = 64 * 1024 * 1024;
const NEWLINE = 0x0a;

/** Bytes after the last complete record that are not a record. */
export interface TailDamage {
  /** Length of the damaged bytes, without a trailing newline. */
  readonly bytes: number;
  /** SHA-256 of those bytes: the next record's `prev`. */
  readonly sha256: string;
  /** True when the damage is not yet ended by a newline (the repair must add one). */
  readonly unterminated: boolean;
}

/** Where the chain stands at the end of the file. */
export interface ChainTail {
  /** `seq` of the last complete record; 0 when there is none. */
  readonly lastSeq: number;
  /** SHA-256 of the last complete record line; `GENESIS_HASH` when there is none. */
  readonly lastHash: string;
  readonly damage: TailDamage | null;
  /** File size in bytes when the tail was read (or last written). */
  readonly size: number;
}

/** The chain's end, or the sentence saying why the file cannot be continued. */
export type TailResult =
  | { readonly ok: true; readonly tail: ChainTail }
  | { readonly ok: false; readonly reason: string };

/** Up to `length` bytes of `file` from `from` (fewer at its end). */
export async function readRange(
  file: Deno.FsFile,
  from: number,
  length: number,
): Promise<Uint8Array> {
  const buffer = new Uint8Array(length);
  await file.seek(from, Deno.SeekMode.Start);
  let filled = 0;
  while (filled < length) {
    const read = await file.read(buffer.subarray(filled));
    if (read === null) break;
    filled += read;
  }
  return buffer.subarray(0, filled);
}

/**
 * Newlines in `bytes`, found by the runtime's `indexOf` (a byte loop in
 * JavaScript took a cold start several milliseconds per 64 KiB: it runs
 * once, before the compiler ever sees it).
 */
function countNewlines(bytes: Uint8Array): number {
  let count = 0;
  for (let at = bytes.indexOf(NEWLINE); at !== -1; at = bytes.indexOf(NEWLINE, at + 1)) count++;
  return count;
}

/**
 * Finds the last complete record of the file open as `file`.
 *
 * @param file the log, opened readable
 * @param path the log's path, for messages
 * @returns the chain's end and any damage after it
 */
export async function readChainTail(file: Deno.FsFile, path: string): Promise<TailResult> {
  const size = (await file.stat()).size;
  if (size === 0) {
    return { ok: true, tail: { lastSeq: 0, lastHash: GENESIS_HASH, damage: null, size } };
  }

  // Enough bytes to hold the last record line plus up to two damaged lines:
  // four newlines (or the start of the file) bound that.
  let start = size;
  let tail: Uint8Array = new Uint8Array(0);
  while (start > 0 && countNewlines(tail) < 4) {
    if (tail.length > MAX_TAIL_BYTES) {
      return {
        ok: false,
        reason:
          `Cannot continue the audit log "${path}": its last lines exceed ${MAX_TAIL_BYTES} bytes.`,
      };
    }
    // A record is a line of a few hundred bytes: the first read is small.
    const from = Math.max(0, start - (tail.length === 0 ? FIRST_CHUNK_BYTES : CHUNK_BYTES));
    tail = concatBytes([await readRange(file, from, start - from), tail]);
    start = from;
  }

  // Split into lines; the last element is the unterminated fragment ("" if none).
  const lines: Uint8Array[] = [];
  let lineStart = 0;
  for (let at = tail.indexOf(NEWLINE); at !== -1; at = tail.indexOf(NEWLINE, lineStart)) {
    lines.push(tail.subarray(lineStart, at));
    lineStart = at + 1;
  }
  const fragment = tail.subarray(lineStart);
  // When the read did not reach the start of the file, the first line may be partial.
  const firstWhole = start === 0 ? 0 : 1;

  let damagedLines = fragment.length > 0 ? 1 : 0;
  for (let index = lines.length - 1; index >= firstWhole; index--) {
    const line = lines[index]!;
    const parsed = parseRecordLine(line);
    if (parsed.ok) {
      const damagedFrom = lines.slice(0, index + 1).reduce((sum, l) => sum + l.length + 1, 0);
      return {
        ok: true,
        tail: {
          lastSeq: parsed.line.seq,
          lastHash: sha256Hex(line),
          damage: damageOf(tail.subarray(damagedFrom), fragment.length > 0),
          size,
        },
      };
    }
    damagedLines++;
    if (damagedLines > 2) break;
  }
  return {
    ok: false,
    reason:
      `Cannot continue the audit log "${path}": it does not end with an htmcp audit record. ` +
      `Check it with "htmcp audit verify" and move it aside.`,
  };
}

function damageOf(region: Uint8Array, unterminated: boolean): TailDamage | null {
  if (region.length === 0) return null;
  const bytes = unterminated ? region : region.subarray(0, region.length - 1);
  return { bytes: bytes.length, sha256: sha256Hex(bytes), unterminated };
}

/**
 * The first line of the file, when it is a complete record; null otherwise.
 * Used to recognise a file another writer started (its first record is a
 * `segment` naming the head this writer also knows).
 *
 * @param file the log, opened readable
 */
export async function readFirstRecord(file: Deno.FsFile): Promise<ParsedLine | null> {
  const head = await readRange(file, 0, CHUNK_BYTES);
  const end = head.indexOf(NEWLINE);
  if (end < 0) return null;
  const parsed = parseRecordLine(head.subarray(0, end));
  return parsed.ok ? parsed.line : null;
}
