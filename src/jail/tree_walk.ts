/**
 * A bounded walk of a folder tree that refuses when any symlink in it
 * leads outside the jail. It backs the tools that follow links while they
 * recurse (`grep -R`, `diff -r`, `find -L`, ...) or copy trees (`cp -r`):
 * each argument may be inside while a link deep in the tree leads to
 * `/etc/shadow`, and without the kernel sandbox the tool would read or
 * write through it.
 *
 * A link that stays inside and names a folder is walked as well (the tool
 * follows it there), once per real folder. The tree is walked in one call
 * of the server's helper (`walkTree`; folder by folder in the operator's
 * CLI), bounded by its entry count and the call's budget; a tree too large
 * for either is refused, not passed.
 * The walk checks a snapshot: a link planted between the walk and the
 * command is the check-then-use race that only the kernel sandbox closes.
 *
 * @module
 */

import * as posix from "../path/mod.ts";
import type { CheckBudget } from "./budget.ts";
import { isInside } from "./is_inside.ts";
import { walkTree } from "./list_folder.ts";
import { describeError, resolveFollowingSymlinks } from "./resolve.ts";

/** Where the walk found a problem, relative to the jail, or null when the tree is clean. */
export type WalkFinding = { readonly path: string; readonly why: string } | null;

/**
 * Walks the tree at `root` (a real path inside the jail).
 *
 * @param jailRoot The jail's real path.
 * @param root A real folder inside the jail.
 * @param budget The call's lookup count and deadline.
 * @param visited Real folders already walked in this call (shared across roots).
 * @param anyLink Report every symlink, not only those leading out (for a
 *   copy that would reproduce the links at another depth).
 */
export async function findEscapingLink(
  jailRoot: string,
  root: string,
  budget: CheckBudget,
  visited: Set<string>,
  anyLink = false,
): Promise<WalkFinding> {
  const pending = [root];
  const relative = (path: string) => posix.relative(jailRoot, path) || ".";
  while (pending.length > 0) {
    const folder = pending.pop() as string;
    if (visited.has(folder)) continue;
    visited.add(folder);
    // The whole tree at once (the server's helper walks it in one call, each
    // folder by descriptor beneath the jail, link-free): a folder swapped
    // for a link to a host folder must not be walked, nor its names quoted.
    // git folders too: a link planted in `.git` is followed like any other.
    const tree = await walkTree(jailRoot, folder, budget, true);
    if (!tree.ok) return { path: relative(folder), why: tree.why };
    for (const path of tree.links) {
      if (anyLink) {
        return { path: relative(path), why: "it is a symlink, which the copy would make again" };
      }
      const resolved = await resolveFollowingSymlinks(
        jailRoot,
        posix.dirname(path),
        posix.basename(path),
        budget,
      );
      if (!resolved.ok) return { path: relative(path), why: resolved.why };
      if (!isInside(jailRoot, resolved.path)) {
        return { path: relative(path), why: "it is a symlink that leads outside the jail" };
      }
      if (!resolved.exists) continue;
      try {
        // Synchronous: the walk just resolved it (budget.ts says why).
        if (Deno.statSync(resolved.path).isDirectory) pending.push(resolved.path);
      } catch (error) {
        return { path: relative(path), why: describeError(error) };
      }
    }
  }
  return null;
}
