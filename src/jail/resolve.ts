/**
 * Resolves a path the way the kernel will when a command opens it: one
 * segment at a time, following every symlink (also dangling ones, whose
 * target a write would create), and applying `..` to the resolved parent,
 * never to the text. Where the path stops existing, the remaining segments
 * are applied lexically to the deepest existing folder, so a file a command
 * may create is judged by where it would land.
 *
 * Only `lstat` and `readlink` are used, and only on paths the walk reaches.
 * A walk that starts at the jail (relative paths, or absolute ones spelled
 * under the jail root) never touches a folder above the jail, so it works
 * under a Deno read grant for the jail alone. An error other than "does not
 * exist" (`PermissionDenied`, or `NotCapable` from Deno's permission layer)
 * means the path cannot be shown to stay inside, and the caller refuses it.
 *
 * @module
 */

import { posix } from "node:path";

/** Linux gives up after 40 symlinks (ELOOP); so do we. */
const MAX_SYMLINK_HOPS = 40;

/** Where a path leads. */
export type Resolution =
  | {
    readonly ok: true;
    /** The absolute, symlink-free path. */
    readonly path: string;
    /** False when some segment does not exist (the tail was applied lexically). */
    readonly exists: boolean;
  }
  | { readonly ok: false; readonly why: string };

function segmentsOf(path: string): string[] {
  return path.split("/").filter((segment) => segment !== "" && segment !== ".");
}

/**
 * Errors that mean "no entry here": the kernel would fail the same open, so
 * the rest of the path is applied lexically. A name too long to exist
 * (ENAMETOOLONG, e.g. a long grep pattern) is one of them.
 */
export function isMissing(error: unknown): boolean {
  return error instanceof Deno.errors.NotFound || error instanceof Deno.errors.NotADirectory ||
    (error instanceof Error && (error as { code?: unknown }).code === "ENAMETOOLONG");
}

function describeError(error: unknown): string {
  return error instanceof Error ? error.name : "unknown error";
}

/**
 * Resolves `target` (absolute, or relative to `base`) following symlinks.
 *
 * @param jailRoot The jail's real path: a known symlink-free prefix the walk may jump to.
 * @param base A real, absolute folder that relative targets start from.
 * @param target The path as the command will see it.
 */
export async function resolveFollowingSymlinks(
  jailRoot: string,
  base: string,
  target: string,
): Promise<Resolution> {
  const jailSegments = segmentsOf(jailRoot);
  let current = target.startsWith("/") ? "/" : base;
  const pending = segmentsOf(target);
  let exists = true;
  let hops = 0;

  while (pending.length > 0) {
    // Jump over the jail root's own segments: it is already real, and
    // stat-ing its ancestors may be outside the server's read grant.
    if (exists) {
      const currentSegments = segmentsOf(current);
      const rest = jailSegments.slice(currentSegments.length);
      if (
        rest.length > 0 &&
        currentSegments.every((segment, index) => segment === jailSegments[index]) &&
        rest.every((segment, index) => pending[index] === segment)
      ) {
        pending.splice(0, rest.length);
        current = jailRoot;
        continue;
      }
    }
    const segment = pending.shift() as string;
    if (segment === "..") {
      current = posix.dirname(current);
      continue;
    }
    const next = posix.join(current, segment);
    if (!exists) {
      current = next;
      continue;
    }
    let info: Deno.FileInfo;
    try {
      info = await Deno.lstat(next);
    } catch (error) {
      if (!isMissing(error)) return { ok: false, why: describeError(error) };
      exists = false;
      current = next;
      continue;
    }
    if (!info.isSymlink) {
      current = next;
      continue;
    }
    hops++;
    if (hops > MAX_SYMLINK_HOPS) return { ok: false, why: "too many levels of symbolic links" };
    let link: string;
    try {
      link = await Deno.readLink(next);
    } catch (error) {
      return { ok: false, why: describeError(error) };
    }
    pending.unshift(...segmentsOf(link));
    if (link.startsWith("/")) current = "/";
  }
  return { ok: true, path: current, exists };
}
