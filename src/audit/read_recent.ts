/**
 * Reads the most recent records of the audit log that match a filter,
 * backwards from the end in chunks, so asking for the last 20 records of a
 * caller costs the bytes between them and the end, not the whole file.
 *
 * Bounded three ways, since a model asks: at most `limit` records, at most
 * `maxBytes` of record text, and at most `maxScanBytes` read from the file
 * (a caller whose records are far back in a busy log gets fewer, and is told).
 * Only the file now at the log's path is read, never a rotated one.
 *
 * The file is opened read-only, never through a symbolic link: whoever can
 * write the log's folder must not make this hand the lines of another file
 * to a model.
 *
 * @module
 */

import { parseRecordLine } from "./line.ts";
import { readRange } from "./tail.ts";

const CHUNK_BYTES = 64 * 1024;
const NEWLINE = 0x0a;
const decoder = new TextDecoder();

/** What to read. */
export interface RecentQuery {
  /** At most this many records. */
  readonly limit: number;
  /** At most this many bytes of record lines in total. */
  readonly maxBytes: number;
  /** Stop after reading this many bytes of the file. */
  readonly maxScanBytes: number;
  /** Only records with a smaller `seq` (the asking call's own record and later ones are left out). */
  readonly beforeSeq: number | null;
  /** Which records to return, given the parsed record. */
  readonly include: (record: Readonly<Record<string, unknown>>) => boolean;
}

/** The records found, oldest first. */
export interface RecentRecords {
  readonly records: readonly Readonly<Record<string, unknown>>[];
  /** True when a matching record was left out because of `maxBytes`. */
  readonly sizeLimited: boolean;
  /** True when the scan stopped at `maxScanBytes` before the start of the file. */
  readonly scanLimited: boolean;
}

export type RecentResult =
  | { readonly ok: true; readonly value: RecentRecords }
  | { readonly ok: false; readonly reason: string };

function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

/**
 * @param path the audit log
 * @param query the bounds and the filter
 * @returns the matching records, oldest first, or why the log cannot be read
 */
export async function readRecentRecords(path: string, query: RecentQuery): Promise<RecentResult> {
  let file: Deno.FsFile;
  try {
    const before = await Deno.lstat(path);
    if (before.isSymlink) {
      return { ok: false, reason: `The audit log "${path}" is a symbolic link; it is not read.` };
    }
    file = await Deno.open(path, { read: true });
    const opened = await file.stat();
    if (opened.ino !== before.ino || opened.dev !== before.dev) {
      file.close();
      return { ok: false, reason: `The audit log "${path}" changed while it was opened.` };
    }
  } catch (error) {
    return { ok: false, reason: `Cannot read the audit log "${path}": ${messageOf(error)}.` };
  }
  try {
    return { ok: true, value: await scanBackwards(file, query) };
  } catch (error) {
    return { ok: false, reason: `Cannot read the audit log "${path}": ${messageOf(error)}.` };
  } finally {
    file.close();
  }
}

/** Walks the open log from its end, one chunk at a time, newest line first. */
async function scanBackwards(file: Deno.FsFile, query: RecentQuery): Promise<RecentRecords> {
  const found: Readonly<Record<string, unknown>>[] = [];
  let bytes = 0;
  let sizeLimited = false;
  let end = (await file.stat()).size;
  let scanned = 0;
  const take = (line: Uint8Array): "stop" | "go" => {
    const parsed = parseRecordLine(line);
    if (!parsed.ok) return "go";
    if (query.beforeSeq !== null && parsed.line.seq >= query.beforeSeq) return "go";
    if (!query.include(parsed.line.fields)) return "go";
    if (bytes + line.length > query.maxBytes) {
      sizeLimited = true;
      return "stop";
    }
    bytes += line.length;
    // As written: the line's own JSON, already redacted by the writer.
    found.push(Object.freeze(JSON.parse(decoder.decode(line))));
    return found.length >= query.limit ? "stop" : "go";
  };
  // The start of a line cut by the chunk boundary, joined to the next chunk read.
  let carry: Uint8Array = new Uint8Array(0);
  // The bytes after the last newline are a write in progress (or torn): skipped.
  let atEnd = true;
  let stopped = false;
  while (end > 0 && !stopped && scanned < query.maxScanBytes) {
    const from = Math.max(0, end - CHUNK_BYTES);
    const chunk = await readRange(file, from, end - from);
    scanned += chunk.length;
    const joined = new Uint8Array(chunk.length + carry.length);
    joined.set(chunk);
    joined.set(carry, chunk.length);
    let lineEnd = joined.length;
    if (atEnd) {
      const last = joined.lastIndexOf(NEWLINE);
      lineEnd = last === -1 ? 0 : last;
      atEnd = last === -1;
    }
    for (let i = lineEnd - 1; i >= 0 && !stopped; i--) {
      if (joined[i] !== NEWLINE) continue;
      stopped = take(joined.subarray(i + 1, lineEnd)) === "stop";
      lineEnd = i;
    }
    carry = joined.slice(0, lineEnd);
    end = from;
    if (end === 0 && !stopped && carry.length > 0) stopped = take(carry) === "stop";
  }
  return {
    records: found.reverse(),
    sizeLimited,
    scanLimited: !stopped && end > 0,
  };
}
