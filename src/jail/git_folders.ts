/**
 * Which git folder, if any, holds a path. Without the kernel sandbox, git's
 * own files are part of the boundary: git reads paths and options from them
 * (`MERGE_RR` names files rerere copies, `rebase-apply/apply-opt` holds
 * `git apply` options, `worktrees/<id>/gitdir` names folders git moves and
 * deletes, the index names the files checkout writes) and uses them without
 * checking that they stay in the work tree. git itself writes them only from
 * input it has checked; a model writing them with `echo`, `tr` or `cp`
 * would hand git any host path. So the check step refuses other commands'
 * paths into a git folder (`check_words.ts` says which).
 *
 * A folder is a git folder when a segment of its path is named `.git` (in
 * any case), or when it holds what git looks for in one (`setup.c`,
 * `is_git_directory`): a `HEAD`, a `commondir`, or both `objects` and
 * `refs`. The test is deliberately wider than git's: any one of those
 * marks makes a folder protected, so a model building a git folder under
 * another name entry by entry is refused at the step that would complete it
 * (the last missing mark is written into a folder that already has another).
 *
 * @module
 */
import * as posix from "../path/mod.ts";
import type { CheckBudget } from "./budget.ts";
import { describeError, isMissing } from "./resolve.ts";

/** Where a path is, with respect to git folders. */
export type GitFolderVerdict =
  | { readonly ok: true; readonly folder: string | null }
  | { readonly ok: false; readonly why: string };

/** The entries one of which marks a folder as a git folder (with `objects` + `refs`). */
const SINGLE_MARKS = ["HEAD", "commondir"] as const;

async function present(
  path: string,
  budget: CheckBudget,
): Promise<boolean | { readonly why: string }> {
  const found = await budget.lstat(path);
  if ("budget" in found) return { why: found.budget };
  if ("error" in found) return isMissing(found.error) ? false : { why: describeError(found.error) };
  return true;
}

/** Whether the existing folder `folder` holds a mark of a git folder. */
async function looksLikeGitFolder(
  folder: string,
  budget: CheckBudget,
): Promise<boolean | { readonly why: string }> {
  for (const mark of SINGLE_MARKS) {
    const found = await present(posix.join(folder, mark), budget);
    if (found !== false) return found;
  }
  const objects = await present(posix.join(folder, "objects"), budget);
  if (objects !== true) return objects;
  return await present(posix.join(folder, "refs"), budget);
}

/**
 * The git folder that is `path` or holds it, searched from `path` up to the
 * jail root, or null.
 *
 * @param jailRoot The jail's real path; folders above it are not looked at.
 * @param path An absolute path inside the jail with its symlinks resolved
 *   (the jail's resolver's answer); it need not exist.
 * @param budget The call's lookup budget.
 * @returns The innermost git folder holding `path` (itself included), null
 *   when none does, or why the folders could not be looked at (a refusal).
 *
 * @example
 * ```ts
 * import { gitFolderHolding } from "./git_folders.ts";
 * import { CheckBudget } from "./budget.ts";
 * const verdict = await gitFolderHolding("/srv/jail", "/srv/jail/repo/.git/index", new CheckBudget());
 * // { ok: true, folder: "/srv/jail/repo/.git" }
 * ```
 */
export async function gitFolderHolding(
  jailRoot: string,
  path: string,
  budget: CheckBudget,
): Promise<GitFolderVerdict> {
  const relative = posix.relative(jailRoot, path);
  const segments = relative === "" ? [] : relative.split("/");
  // By name first: no lookup, and it covers paths that do not exist yet.
  const named = segments.findIndex((segment) => segment.toLowerCase() === ".git");
  if (named !== -1) {
    return { ok: true, folder: posix.join(jailRoot, ...segments.slice(0, named + 1)) };
  }
  for (let depth = segments.length; depth >= 0; depth--) {
    const folder = posix.join(jailRoot, ...segments.slice(0, depth));
    const info = await budget.lstat(folder);
    if ("budget" in info) return { ok: false, why: info.budget };
    if ("error" in info) {
      if (isMissing(info.error)) continue;
      return { ok: false, why: describeError(info.error) };
    }
    if (!info.isDirectory) continue;
    const looks = await looksLikeGitFolder(folder, budget);
    if (typeof looks === "object") return { ok: false, why: looks.why };
    if (looks) return { ok: true, folder };
  }
  return { ok: true, folder: null };
}
