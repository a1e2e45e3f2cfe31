/**
 * Resolves a path the way the kernel will when a command opens it: one
 * segment at a time, following every symlink (also dangling ones, whose
 * target a write would create), and applying `..` to the resolved parent,
 * never to the text. Where the path stops existing, the remaining segments
 * are applied lexically to the deepest existing folder, so a file a command
 * may create is judged by where it would land; a `..` that climbs back to
 * that folder resumes the lookups (as `realpath -m` and `mkdir -p` do).
 *
 * Only `lstat` and `readlink` are used, and only on paths the walk reaches.
 * Anything the walk cannot settle is a refusal, never "missing": a name or
 * path too long for the kernel (ENAMETOOLONG; `mkdir -p` and `*at()` calls
 * still reach such paths one component at a time), a symlink loop (ELOOP),
 * a folder the server may not search (EACCES), a lookup the budget does not
 * allow.
 * A walk that starts at the jail (relative paths, or absolute ones spelled
 * under the jail root) never touches a folder above the jail, so it works
 * under a Deno read grant for the jail alone. An error other than "does not
 * exist" (`PermissionDenied`, or `NotCapable` from Deno's permission layer)
 * means the path cannot be shown to stay inside, and the caller refuses it.
 *
 * @module
 */

import * as posix from "../path/mod.ts";
import { CheckBudget } from "./budget.ts";

/** Linux gives up after 40 symlinks (ELOOP); so do we. */
const MAX_SYMLINK_HOPS = 40;
/** Linux's PATH_MAX, including the terminating NUL. */
const PATH_MAX = 4096;
/** Linux's NAME_MAX: the longest name of one folder entry. */
export const NAME_MAX = 255;

const ENCODER = new TextEncoder();

function byteLength(text: string): number {
  return ENCODER.encode(text).length;
}

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
 * Errors that mean "no entry here", so the rest of the path is applied
 * lexically to the deepest existing folder. Only these two: every other
 * error (ENAMETOOLONG, ELOOP, EACCES, NotCapable) means the walk does not
 * know what is there, and the path is refused.
 */
export function isMissing(error: unknown): boolean {
  return error instanceof Deno.errors.NotFound || error instanceof Deno.errors.NotADirectory;
}

/** A plain name for a lookup error, for the refusal sentence. */
export function describeError(error: unknown): string {
  if (error instanceof Error) {
    const code = (error as { code?: unknown }).code;
    if (code === "ENAMETOOLONG") return "a name or path is too long to resolve";
    if (code === "ELOOP") return "too many levels of symbolic links";
    if (error instanceof Deno.errors.PermissionDenied) {
      return "a folder on the way cannot be searched";
    }
    return error.name;
  }
  return "unknown error";
}

/**
 * Resolves `target` (absolute, or relative to `base`) following symlinks.
 *
 * @param jailRoot The jail's real path: a known symlink-free prefix the walk may jump to.
 * @param base A real, absolute folder that relative targets start from.
 * @param target The path as the command will see it.
 * @param budget Shared lookup count and deadline; none for unbounded callers.
 */
export async function resolveFollowingSymlinks(
  jailRoot: string,
  base: string,
  target: string,
  budget?: CheckBudget,
): Promise<Resolution> {
  const lookups = budget ?? new CheckBudget();
  const jailSegments = segmentsOf(jailRoot);
  let current = target.startsWith("/") ? "/" : base;
  const pending = segmentsOf(target);
  let exists = true;
  /** The real folder the lexical tail hangs from while `exists` is false. */
  let deepestExisting = current;
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
      // Back at (or above) the deepest folder that exists: from here the
      // names exist again, and a link among them is followed. `mkdir -p
      // new/../link/x` creates `new`, comes back, and goes through `link`.
      if (!exists && current.length <= deepestExisting.length) exists = true;
      continue;
    }
    const next = posix.join(current, segment);
    // The kernel refuses such names (ENAMETOOLONG) but `mkdir -p` and other
    // tools walk one component at a time with `*at()` calls and get there:
    // a path this walk cannot look up is not a path it may judge lexically.
    if (byteLength(segment) > NAME_MAX || byteLength(next) >= PATH_MAX) {
      return { ok: false, why: "a name or path is too long to resolve" };
    }
    if (!exists) {
      current = next;
      continue;
    }
    const looked = await lookups.lstat(next);
    if ("budget" in looked) return { ok: false, why: looked.budget };
    if ("error" in looked) {
      if (!isMissing(looked.error)) return { ok: false, why: describeError(looked.error) };
      exists = false;
      deepestExisting = current;
      current = next;
      continue;
    }
    const info = looked;
    if (!info.isSymlink) {
      current = next;
      continue;
    }
    hops++;
    if (hops > MAX_SYMLINK_HOPS) return { ok: false, why: "too many levels of symbolic links" };
    let link: string;
    try {
      // Synchronous, as the lstat that found the link (budget.ts says why).
      link = Deno.readLinkSync(next);
    } catch (error) {
      return { ok: false, why: describeError(error) };
    }
    pending.unshift(...segmentsOf(link));
    if (link.startsWith("/")) current = "/";
  }
  return { ok: true, path: current, exists };
}
