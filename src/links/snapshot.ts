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
 * Check-then-use race: the open is the jail's link-free open
 * (`openRegularInJail`), which walks the path before and after opening and
 * requires the same file each time; its module comment says what remains.
 * The kernel sandbox does not help here, because the server reads, not a
 * sandboxed command. SECURITY.md states this; `[links] enabled = false`
 * removes the feature for operators who let models run loops in the jail.
 *
 * @module
 */
import * as posix from "../path/mod.ts";
import { newFileHash } from "./file_hash.ts";
import { isInside, openRegularInJail, type OpenRegularRefusal } from "../jail/mod.ts";

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

/** The refusal, in this feature's codes, of a file the jail's link-free open did not open. */
function refusalOf(requested: string, refusal: OpenRegularRefusal): SnapshotResult {
  switch (refusal.kind) {
    case "missing":
      return refuse("NOT_A_REGULAR_FILE", `The path "${requested}" does not exist in the jail.`);
    case "symlink":
      return refuse(
        "SYMLINK_REFUSED",
        `The path "${requested}" goes through a symbolic link${
          refusal.component === null ? "" : ` ("${refusal.component}")`
        }; links are never followed: name the file itself.`,
      );
    case "folder":
      return refuse(
        "NOT_A_REGULAR_FILE",
        `The path "${requested}" is a folder; only a regular file can be linked.`,
      );
    case "not-regular":
      return refuse(
        "NOT_A_REGULAR_FILE",
        `The path "${requested}" is not a regular file; only a regular file can be linked.`,
      );
    case "escape":
      return refuse(
        "PATH_ESCAPE",
        `The path "${requested}" cannot be shown to stay inside the jail (${refusal.why}).`,
      );
    case "unreadable":
      return refuse(
        "NOT_A_REGULAR_FILE",
        `The path "${requested}" cannot be examined (${refusal.why}).`,
      );
    case "changed":
      return refuse(
        "NOT_A_REGULAR_FILE",
        `The file "${requested}" changed while it was opened; nothing was copied.`,
      );
  }
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
  const tooLarge = (size: number) =>
    refuse(
      "FILE_TOO_LARGE",
      `The file "${requested}" is ${size} bytes; links hold at most ${maxBytes} (links.max_file_bytes).`,
    );
  const opened = await openRegularInJail(jailRoot, judged);
  if (!opened.ok) return refusalOf(requested, opened);
  const source = opened.file;
  try {
    // Refused before any byte is read: a file known to be too large is never copied.
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
