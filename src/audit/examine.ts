/**
 * Decides, under the append lock, whether the file the writer has open is
 * still the log at its path, and if not, what happened to it.
 *
 * Threat answered: whoever can write the log's folder can rotate the log
 * (the operator's logrotate) or tamper with it (rename another file over it,
 * keep a hard link and replace the path, truncate it). A writer that keeps
 * appending to its open descriptor would then send records to a file nobody
 * reads, or start a fresh chain at `seq 1` that hides the cut. So before each
 * append the path's device and inode are compared with the open file, and a
 * file shorter than the writer last saw is a truncation. What is found is
 * returned as a value; the writer decides whether to continue with a
 * `segment` record naming the last head it knew, or to stop.
 *
 * What this cannot see: a rewrite that keeps the inode and does not shrink
 * the file (same length, or longer), and anything done between two appends
 * that is undone before the next. Pin the head elsewhere for those.
 *
 * @module
 */

import type { SegmentFinding } from "./records.ts";
import { isSameFile, type LogFile, lstatOrNullSync, openLogFile } from "./open_file.ts";
import { readChainTail, readFirstRecord } from "./tail.ts";

/** A chain position: the last record's `seq` and line hash. */
export interface ChainHead {
  readonly seq: number;
  readonly hash: string;
}

/** What the writer found at its path. */
export type Examined =
  /** The open file is still the log: append to it. */
  | { readonly kind: "same"; readonly size: number }
  /** Another writer already started a new file that continues this chain: switch to it. */
  | { readonly kind: "adopt"; readonly log: LogFile }
  /** The log was rotated, replaced or truncated: `log` is where to write next, after a `segment`. */
  | {
    readonly kind: "segment";
    readonly found: SegmentFinding;
    readonly log: LogFile;
    /** The last head the writer knew of in the file it is leaving. */
    readonly previous: ChainHead;
    readonly foundBytes: number;
  }
  /** Nothing at the path: the writer creates a new file there, after a `segment`. */
  | {
    readonly kind: "missing";
    readonly found: "path_missing" | "file_removed";
    readonly previous: ChainHead;
  }
  /** Nothing safe to write to. */
  | { readonly kind: "refused"; readonly reason: string };

function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

/** The final head of the file still open as `log` (it may be renamed or unlinked). */
async function finalHead(log: LogFile, path: string, known: ChainHead): Promise<ChainHead> {
  const read = await readChainTail(log.file, path);
  // A rotated file that no longer reads as a log still had `known` at its end
  // as far as this writer saw.
  return read.ok ? { seq: read.tail.lastSeq, hash: read.tail.lastHash } : known;
}

/**
 * @param path the log's configured path
 * @param current the file the writer has open
 * @param knownEnd the largest size the writer has seen `current` at
 * @param knownHead the last chain head the writer wrote or read in `current`
 * @returns what to do before the next append
 */
export async function examineLog(
  path: string,
  current: LogFile,
  knownEnd: number,
  knownHead: ChainHead,
): Promise<Examined> {
  let at: Deno.FileInfo | null;
  let openInfo: Deno.FileInfo;
  try {
    // Synchronous on purpose: two metadata reads of a local file that never
    // wait on the disk, run before every append; through the runtime's
    // thread pool they cost about ten times as much as the system calls.
    at = lstatOrNullSync(path);
    openInfo = current.file.statSync();
  } catch (error) {
    return {
      kind: "refused",
      reason: `Cannot check the audit log "${path}": ${messageOf(error)}.`,
    };
  }

  if (at === null) {
    // Renamed away (rotation without `create`, or an external rename before
    // SIGHUP), or deleted. A renamed file keeps a link; a deleted one (or one
    // rotated and already compressed away) has none, and its records are gone.
    const previous = await finalHead(current, path, knownHead);
    return {
      kind: "missing",
      found: openInfo.nlink === 0 ? "file_removed" : "path_missing",
      previous,
    };
  }

  if (at.isSymlink) {
    return {
      kind: "refused",
      reason:
        `The audit log "${path}" was replaced by a symbolic link; htmcp never follows one to write its log.`,
    };
  }

  if (!isSameFile(at, current)) {
    const opened = await openLogFile(path);
    if (!opened.ok) return { kind: "refused", reason: opened.reason };
    const next = opened.log;
    try {
      const size = (await next.file.stat()).size;
      const previous = await finalHead(current, path, knownHead);
      if (size === 0) {
        return { kind: "segment", found: "new_empty_file", log: next, previous, foundBytes: 0 };
      }
      // Several servers share the log: the first one to see the rotation
      // started the new file with a `segment` naming the old file's last
      // hash, which this writer can check against its still-open old file.
      const first = await readFirstRecord(next.file);
      if (first?.kind === "segment" && first.fields.previous_sha256 === previous.hash) {
        return { kind: "adopt", log: next };
      }
      return { kind: "segment", found: "file_replaced", log: next, previous, foundBytes: size };
    } catch (error) {
      next.file.close();
      return {
        kind: "refused",
        reason: `Cannot check the audit log "${path}": ${messageOf(error)}.`,
      };
    }
  }

  if (openInfo.size < knownEnd) {
    // Content is gone from the file itself, so only the head this writer
    // remembers can say where it stood. Another writer may already have
    // marked the cut: its `segment` record then heads the file and names a
    // head at least as recent as this writer's.
    try {
      const first = await readFirstRecord(current.file);
      const previousSeq = first?.fields.previous_seq;
      if (
        first?.kind === "segment" && first.fields.found === "file_truncated" &&
        typeof previousSeq === "number" && previousSeq >= knownHead.seq
      ) {
        return { kind: "same", size: openInfo.size };
      }
    } catch {
      // unreadable head: treated as an unmarked truncation below
    }
    return {
      kind: "segment",
      found: "file_truncated",
      log: current,
      previous: knownHead,
      foundBytes: openInfo.size,
    };
  }
  return { kind: "same", size: openInfo.size };
}
