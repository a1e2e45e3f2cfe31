/**
 * Argument path confinement: every argument that names a path must lead,
 * after following symlinks, to somewhere inside the jail, whether or not it
 * exists yet (a path a command would create is judged by its deepest
 * existing folder).
 *
 * Candidates come from the policy's `pathArgumentCandidates`. Those that
 * look like paths (absolute, `~`, containing `/` or `..`) are always
 * resolved; a bare word is resolved only when an entry of that name exists
 * in the cwd, since `cat link` with `link -> /etc/passwd` names a path
 * without a slash, while `grep pattern` names none.
 *
 * Limits: files named inside other files and paths a program computes are
 * not visible here (the path model refuses the list options it knows of
 * without the sandbox); and the check-then-use race described in
 * `confine_cwd.ts` applies equally. The kernel sandbox is what contains both.
 *
 * @module
 */

import { looksLikePath } from "../policy/mod.ts";
import * as posix from "../path/mod.ts";
import { isInside } from "./is_inside.ts";
import { CheckBudget } from "./budget.ts";
import { describeError, isMissing, NAME_MAX, resolveFollowingSymlinks } from "./resolve.ts";
import type { JailResult } from "./types.ts";

/** A candidate argument and the real path it leads to. */
export interface ReachedPath {
  /** The candidate as the path model gave it. */
  readonly text: string;
  /** Where it leads, every symlink followed. */
  readonly path: string;
}

function escape(reason: string): JailResult<never> {
  return { ok: false, code: "PATH_ESCAPE", reason };
}

async function namesExistingEntry(
  cwd: string,
  word: string,
  budget: CheckBudget,
): Promise<boolean | string> {
  // A bare word longer than NAME_MAX cannot be a folder entry: the kernel
  // fails its lookup, and no `*at()` walk reaches it either (it has no `/`).
  if (new TextEncoder().encode(word).length > NAME_MAX) return false;
  const found = await budget.lstat(posix.join(cwd, word));
  if ("budget" in found) return found.budget;
  if ("error" in found) return isMissing(found.error) ? false : describeError(found.error);
  return true;
}

/**
 * Checks that every candidate path argument stays inside the jail.
 *
 * @param jailRoot The jail's real path.
 * @param cwd The confined real working directory (from `confineCwd`).
 * @param candidates From `pathArgumentCandidates(argv)`.
 * @param budget The call's lookup count and deadline.
 * @returns Each candidate with the real path it leads to (bare words naming
 *   no entry are not paths and are left out), or `PATH_ESCAPE` naming the
 *   first offending argument.
 *
 * @example
 * ```ts
 * import { confineArgs } from "./confine_args.ts";
 * const result = await confineArgs("/srv/jail", "/srv/jail", ["/etc/passwd"]);
 * // { ok: false, code: "PATH_ESCAPE", reason: 'The argument "/etc/passwd" ...' }
 * ```
 */
export async function confineArgs(
  jailRoot: string,
  cwd: string,
  candidates: readonly string[],
  budget: CheckBudget = new CheckBudget(),
): Promise<JailResult<readonly ReachedPath[]>> {
  const reached: ReachedPath[] = [];
  for (const candidate of candidates) {
    if (candidate.startsWith("~")) {
      return escape(
        `The argument "${candidate}" names a home folder, which is outside the jail; htmcp expands no "~".`,
      );
    }
    if (!looksLikePath(candidate)) {
      const exists = await namesExistingEntry(cwd, candidate, budget);
      if (exists === false) continue;
      if (exists !== true) {
        return escape(
          `The argument "${candidate}" cannot be shown to stay inside the jail (${exists}).`,
        );
      }
    }
    // As for the cwd: a path whose plain spelling, resolved against the cwd,
    // is outside the jail is refused without a lookup, with a plain sentence.
    // Lexical `..` can only over-refuse here (a symlink inside leading back
    // in), never over-allow: allowing is left to the symlink-following walk.
    if (!isInside(jailRoot, posix.resolve(cwd, candidate))) {
      return escape(`The argument "${candidate}" names a path outside the jail.`);
    }
    const resolved = await resolveFollowingSymlinks(jailRoot, cwd, candidate, budget);
    if (!resolved.ok) {
      return escape(
        `The argument "${candidate}" cannot be shown to stay inside the jail (${resolved.why}).`,
      );
    }
    if (!isInside(jailRoot, resolved.path)) {
      return escape(`The argument "${candidate}" names a path outside the jail.`);
    }
    reached.push({ text: candidate, path: resolved.path });
  }
  return { ok: true, value: reached };
}
