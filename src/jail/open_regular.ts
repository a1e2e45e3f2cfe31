/**
 * Opens a regular file of the jail for the server to read, following no
 * symlink on the way: the one way htmcp itself reads a file a command may
 * have written (a file link's snapshot, the repository check's reads of
 * `.git`). The server reads with its own rights, outside any sandbox, so a
 * link in the path would make it read a host file.
 *
 * Deno has no `openat`/`O_NOFOLLOW` (its `node:fs` flags are dropped under a
 * scoped read grant: verified on 2.9.6), so the open goes by path and
 * follows whatever is there at that instant. The answer: walk the path and
 * `lstat` every component below the jail root (none may be a link), require
 * the jail's resolver to agree that the path leads to itself, open, `fstat`
 * the opened file and require the device and inode the walk saw, then walk
 * again with the file held open and require the same again. A link swapped
 * in for the open alone leaves the descriptor naming another file, which the
 * comparisons refuse.
 *
 * What remains, measured: every step is a separate system call that follows
 * the folders above the last component, so a process in the jail renaming a
 * folder to and from a link as fast as it can is, now and then, seen as the
 * link by exactly the steps that take the file's identity and as the folder
 * by those that look for links (in tests about 1 read in 10,000 under a
 * dedicated rename loop). Only the kernel can close that (`openat2` with
 * `RESOLVE_BENEATH`). So the server treats what it reads this way as
 * possibly a host file's: callers never quote it back (the repository check
 * names files and keys, never their text), and a file link's snapshot is a
 * copy the operator enabled `[links]` for (SECURITY.md). Also remaining: a
 * hard link to a host file made outside htmcp, and a regular file swapped
 * for a pipe just before the open, which makes this read wait for a writer
 * (it holds up that one call and reads nothing else).
 *
 * @module
 */
import * as posix from "../path/mod.ts";
import { describeError, isMissing, resolveFollowingSymlinks } from "./resolve.ts";

/** Why a file was not opened. */
export type OpenRegularRefusal =
  | { readonly kind: "missing" }
  /** `component` is the path of the link below the jail root (null: the resolver saw one). */
  | { readonly kind: "symlink"; readonly component: string | null }
  | { readonly kind: "folder" }
  | { readonly kind: "not-regular" }
  | { readonly kind: "escape"; readonly why: string }
  | { readonly kind: "unreadable"; readonly why: string }
  | { readonly kind: "changed" };

/** The open file with what `fstat` said of it, or why not. */
export type OpenRegularResult =
  | { readonly ok: true; readonly file: Deno.FsFile; readonly size: number }
  | ({ readonly ok: false } & OpenRegularRefusal);

interface Identity {
  readonly dev: number;
  readonly ino: number;
  readonly size: number;
}

/** One walk: no link at any component, the resolver agreeing, a regular file at the end. */
async function locate(
  jailRoot: string,
  absolute: string,
): Promise<{ ok: true; identity: Identity } | ({ ok: false } & OpenRegularRefusal)> {
  const below = posix.relative(jailRoot, absolute).split("/");
  let current = jailRoot;
  for (const [index, segment] of below.entries()) {
    current = posix.join(current, segment);
    let info: Deno.FileInfo;
    try {
      info = await Deno.lstat(current);
    } catch (error) {
      if (isMissing(error)) return { ok: false, kind: "missing" };
      return { ok: false, kind: "unreadable", why: describeError(error) };
    }
    if (info.isSymlink) {
      return { ok: false, kind: "symlink", component: below.slice(0, index + 1).join("/") };
    }
    if (index === below.length - 1) {
      if (info.isDirectory) return { ok: false, kind: "folder" };
      if (!info.isFile || info.ino === null) return { ok: false, kind: "not-regular" };
    }
  }
  // The jail's own resolver, as the second, independent judge of containment:
  // a walk that follows links ends where the text points only when none was one.
  const resolved = await resolveFollowingSymlinks(jailRoot, jailRoot, absolute);
  if (!resolved.ok) return { ok: false, kind: "escape", why: resolved.why };
  if (resolved.path !== absolute) return { ok: false, kind: "symlink", component: null };
  if (!resolved.exists) return { ok: false, kind: "missing" };
  let info: Deno.FileInfo;
  try {
    info = await Deno.lstat(absolute);
  } catch (error) {
    return { ok: false, kind: "unreadable", why: describeError(error) };
  }
  if (!info.isFile || info.ino === null) return { ok: false, kind: "not-regular" };
  return { ok: true, identity: { dev: info.dev, ino: info.ino, size: info.size } };
}

function sameFile(a: Identity, info: Deno.FileInfo): boolean {
  return info.dev === a.dev && info.ino === a.ino;
}

/**
 * Opens the regular file at `absolute` (below `jailRoot`, already judged
 * inside by its text) for reading, through no symlink.
 *
 * @param jailRoot The jail's real path.
 * @param absolute The file's absolute path, below the jail root.
 * @returns The open file (the caller closes it) and its size, or why not.
 */
export async function openRegularInJail(
  jailRoot: string,
  absolute: string,
): Promise<OpenRegularResult> {
  const before = await locate(jailRoot, absolute);
  if (!before.ok) return before;
  let file: Deno.FsFile;
  try {
    file = await Deno.open(absolute, { read: true });
  } catch (error) {
    if (isMissing(error)) return { ok: false, kind: "missing" };
    return { ok: false, kind: "unreadable", why: describeError(error) };
  }
  let keep = false;
  try {
    const opened = await file.stat();
    if (!opened.isFile || !sameFile(before.identity, opened)) return { ok: false, kind: "changed" };
    // The second walk, with the file held open (see the module comment).
    const after = await locate(jailRoot, absolute);
    if (!after.ok) return after;
    if (!sameFile(after.identity, opened)) return { ok: false, kind: "changed" };
    keep = true;
    return { ok: true, file, size: opened.size };
  } finally {
    if (!keep) file.close();
  }
}
