/**
 * Copies one regular file from the jail into the state directory, following
 * no symlink on the way, bounded in size, hashed as it is copied.
 *
 * Deny on failure: every path that cannot be shown to be a regular file
 * reached through real folders inside the jail is refused with one code.
 *
 * Threats and answers:
 * - A path outside the jail, spelled or through `..`: the text is judged
 *   with the jail's one predicate (`isInside`) and `..` is refused outright,
 *   so the file served is the file the text names, never a lexical guess.
 * - A symlink at any component, leading out of the jail or inside it: every
 *   component below the jail root is `lstat`ed in order and none may be a
 *   link (`SYMLINK_REFUSED`, without saying where it leads); then the jail's
 *   resolver (`resolveFollowingSymlinks`) must agree that the path leads to
 *   itself, so containment is judged by the jail's one implementation.
 * - A folder, a device, a pipe: only a regular file (by `lstat` and again by
 *   `fstat` of the opened file) is copied.
 * - A huge file, or one that grows while it is read: the copy stops at
 *   `max_file_bytes + 1` bytes and is refused; nothing larger reaches disk.
 *
 * Check-then-use race, stated plainly. Deno has no `openat`/`O_NOFOLLOW`
 * (its `node:fs` flags are dropped under a scoped read grant: verified on
 * 2.9.6), so the open goes by path and follows whatever is there at that
 * instant. The answer here: walk and `lstat` before the open, `fstat` the
 * opened file and require the same device and inode, then walk again with
 * the file still open and require the same again. While we hold the file
 * open its inode cannot be reused, so passing means the bytes come from the
 * file that sits, at the second walk, at a symlink-free path inside the
 * jail. What remains is a writer in the jail that swaps a folder on the path
 * for a symlink exactly during the open and swaps it back before the second
 * walk; and a regular file swapped for a pipe just before the open makes
 * this call wait for a writer (it hangs its own call, reads nothing else).
 * The kernel sandbox does not help here, because the server reads, not a
 * sandboxed command. SECURITY.md states this; `[links] enabled = false`
 * removes the feature for operators who let models run loops in the jail.
 *
 * @module
 */
import * as posix from "../path/mod.ts";
import { newFileHash } from "./file_hash.ts";
import { describeError, isInside, isMissing, resolveFollowingSymlinks } from "../jail/mod.ts";

/** The codes a snapshot is refused with. */
export type SnapshotRefusalCode =
  | "PATH_ESCAPE"
  | "SYMLINK_REFUSED"
  | "NOT_A_REGULAR_FILE"
  | "FILE_TOO_LARGE";

/** A copied file, or why not. */
export type SnapshotResult =
  | {
    readonly ok: true;
    /** The path relative to the jail root, as served names and the audit show it. */
    readonly relative: string;
    readonly size: number;
    /** SHA-256 of the copied bytes, lower-case hex. */
    readonly sha256: string;
    /** True when the bytes are UTF-8 text without NUL (may be shown inline as text/plain). */
    readonly text: boolean;
  }
  | { readonly ok: false; readonly code: SnapshotRefusalCode; readonly reason: string };

function refuse(code: SnapshotRefusalCode, reason: string): SnapshotResult {
  return { ok: false, code, reason };
}

/** Where the path stands before any bytes are read: a regular file's identity, or a refusal. */
type Located =
  | {
    readonly ok: true;
    readonly path: string;
    readonly dev: number;
    readonly ino: number;
    readonly size: number;
  }
  | Extract<SnapshotResult, { ok: false }>;

/** Judges the text alone: no filesystem access. */
function judgeText(jailRoot: string, requested: string): string | SnapshotResult {
  if (requested === "" || requested.includes("\0")) {
    return refuse("NOT_A_REGULAR_FILE", "The path is empty or contains a NUL character.");
  }
  if (requested.startsWith("~")) {
    return refuse("PATH_ESCAPE", `The path "${requested}" names a home folder outside the jail.`);
  }
  // `..` is refused, not normalised: after a symlink the kernel applies it
  // to the link's target, lexically it applies to the text; refusing it means
  // the file linked is never one the two readings disagree about.
  if (requested.split("/").includes("..")) {
    return refuse(
      "PATH_ESCAPE",
      `The path "${requested}" contains "..": name the file from the jail root without it.`,
    );
  }
  const absolute = posix.resolve(jailRoot, requested);
  if (!isInside(jailRoot, absolute)) {
    return refuse("PATH_ESCAPE", `The path "${requested}" is outside the jail.`);
  }
  if (absolute === posix.resolve(jailRoot)) {
    return refuse("NOT_A_REGULAR_FILE", "The path names the jail root, a folder.");
  }
  return absolute;
}

/**
 * The no-symlink rule: `lstat` of every component below the jail root, in
 * order, never following one. It runs first so a link is named as a link
 * whatever it points at: following one out of the jail would meet Deno's
 * read grant (`NotCapable`) and be reported as an escape under the real
 * permission set but as a link in a test, one input with two codes.
 */
async function refuseSymlinks(
  jailRoot: string,
  requested: string,
  absolute: string,
): Promise<Extract<SnapshotResult, { ok: false }> | null> {
  const below = posix.relative(jailRoot, absolute).split("/");
  let current = jailRoot;
  for (const [index, segment] of below.entries()) {
    current = posix.join(current, segment);
    let info: Deno.FileInfo;
    try {
      info = await Deno.lstat(current);
    } catch (error) {
      if (isMissing(error)) {
        return {
          ok: false,
          code: "NOT_A_REGULAR_FILE",
          reason: `The path "${requested}" does not exist in the jail.`,
        };
      }
      return {
        ok: false,
        code: "PATH_ESCAPE",
        reason: `The path "${requested}" cannot be examined (${describeError(error)}).`,
      };
    }
    if (info.isSymlink) {
      return {
        ok: false,
        code: "SYMLINK_REFUSED",
        reason: `The path "${requested}" goes through a symbolic link ("${
          below.slice(0, index + 1).join("/")
        }"); links are never followed: name the file itself.`,
      };
    }
  }
  return null;
}

/**
 * One walk: no component may be a symlink, the jail's resolver must agree
 * that the path leads to itself inside the jail, and it must be a regular file.
 */
async function locate(jailRoot: string, requested: string, absolute: string): Promise<Located> {
  const link = await refuseSymlinks(jailRoot, requested, absolute);
  if (link !== null) return link;
  // The jail's own resolver, as the second, independent judge of containment.
  const resolved = await resolveFollowingSymlinks(jailRoot, jailRoot, absolute);
  if (!resolved.ok) {
    return {
      ok: false,
      code: "PATH_ESCAPE",
      reason: `The path "${requested}" cannot be shown to stay inside the jail (${resolved.why}).`,
    };
  }
  // Where a walk that follows links ends is where the text points only when
  // no component was a link: any difference is a link, wherever it leads.
  if (resolved.path !== absolute) {
    return {
      ok: false,
      code: "SYMLINK_REFUSED",
      reason:
        `The path "${requested}" goes through a symbolic link; links are never followed: name the file itself.`,
    };
  }
  if (!resolved.exists) {
    return {
      ok: false,
      code: "NOT_A_REGULAR_FILE",
      reason: `The path "${requested}" does not exist in the jail.`,
    };
  }
  let info: Deno.FileInfo;
  try {
    info = await Deno.lstat(absolute);
  } catch (error) {
    return {
      ok: false,
      code: "NOT_A_REGULAR_FILE",
      reason: `The path "${requested}" cannot be examined (${errorName(error)}).`,
    };
  }
  if (info.isSymlink) {
    return {
      ok: false,
      code: "SYMLINK_REFUSED",
      reason: `The path "${requested}" is a symbolic link; links are never followed.`,
    };
  }
  if (!info.isFile || info.dev === null || info.ino === null) {
    return {
      ok: false,
      code: "NOT_A_REGULAR_FILE",
      reason: `The path "${requested}" is ${
        info.isDirectory ? "a folder" : "not a regular file"
      }; only a regular file can be linked.`,
    };
  }
  return { ok: true, path: absolute, dev: info.dev, ino: info.ino, size: info.size };
}

function sameFile(a: { dev: number; ino: number }, info: Deno.FileInfo): boolean {
  return info.dev === a.dev && info.ino === a.ino;
}

/**
 * Copies `requested` (relative to the jail root, or absolute under it) to
 * `destination` (a new file, created 0600; removed again on any refusal).
 *
 * @param jailRoot The jail's real path.
 * @param requested The caller's path text.
 * @param maxBytes `[links] max_file_bytes`.
 * @param destination Where the copy goes (must not exist).
 */
export async function snapshotJailFile(
  jailRoot: string,
  requested: string,
  maxBytes: number,
  destination: string,
): Promise<SnapshotResult> {
  const judged = judgeText(jailRoot, requested);
  if (typeof judged !== "string") return judged;
  const before = await locate(jailRoot, requested, judged);
  if (!before.ok) return before;
  const tooLarge = (size: number) =>
    refuse(
      "FILE_TOO_LARGE",
      `The file "${requested}" is ${size} bytes; links hold at most ${maxBytes} (links.max_file_bytes).`,
    );
  // Refused before the open: a file known to be too large is never read.
  if (before.size > maxBytes) return tooLarge(before.size);

  let source: Deno.FsFile;
  try {
    source = await Deno.open(judged, { read: true });
  } catch (error) {
    return refuse(
      "NOT_A_REGULAR_FILE",
      `The file "${requested}" cannot be opened (${errorName(error)}).`,
    );
  }
  try {
    const opened = await source.stat();
    if (!opened.isFile || !sameFile(before, opened)) {
      return refuse(
        "NOT_A_REGULAR_FILE",
        `The file "${requested}" changed while it was opened; nothing was copied.`,
      );
    }
    // The second walk, with the file held open (see the module comment).
    const after = await locate(jailRoot, requested, judged);
    if (!after.ok) return after;
    if (!sameFile(after, opened)) {
      return refuse(
        "NOT_A_REGULAR_FILE",
        `The file "${requested}" changed while it was opened; nothing was copied.`,
      );
    }
    if (opened.size > maxBytes) return tooLarge(opened.size);
    const copied = await copyBounded(source, destination, maxBytes);
    if (!copied.ok) return tooLarge(copied.total);
    return { ok: true, relative: posix.relative(jailRoot, judged), ...copied.file };
  } finally {
    source.close();
  }
}

type Copied =
  | { readonly ok: true; readonly file: { size: number; sha256: string; text: boolean } }
  | { readonly ok: false; readonly total: number };

/** Copies at most `maxBytes` (fsynced); more is a refusal and leaves no file behind. */
async function copyBounded(
  source: Deno.FsFile,
  destination: string,
  maxBytes: number,
): Promise<Copied> {
  const hash = await newFileHash();
  const target = await Deno.open(destination, { write: true, createNew: true, mode: 0o600 });
  const buffer = new Uint8Array(64 * 1024);
  let total = 0;
  let text = true;
  const decoder = new TextDecoder("utf-8", { fatal: true });
  let ok = false;
  try {
    while (true) {
      const read = await source.read(buffer);
      if (read === null) break;
      total += read;
      // A file that grows while it is read is cut off here, one byte past the bound.
      if (total > maxBytes) return { ok: false, total };
      const chunk = buffer.subarray(0, read);
      hash.update(chunk);
      if (text) {
        try {
          if (chunk.includes(0)) text = false;
          else decoder.decode(chunk, { stream: true });
        } catch {
          text = false;
        }
      }
      let written = 0;
      while (written < read) written += await target.write(chunk.subarray(written));
    }
    if (text) {
      try {
        decoder.decode();
      } catch {
        text = false;
      }
    }
    await target.sync();
    ok = true;
  } finally {
    target.close();
    if (!ok) await Deno.remove(destination).catch(() => {});
  }
  return { ok: true, file: { size: total, sha256: hash.digestHex(), text } };
}

function errorName(error: unknown): string {
  return error instanceof Error ? error.name : "unknown error";
}
