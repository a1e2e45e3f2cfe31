/**
 * The working-directory jail: every command runs in the jail root or a
 * folder below it, judged after following symlinks.
 *
 * Every refusal here is `CWD_ESCAPE`, including a cwd that does not exist
 * or is not a folder even though its path is inside the jail: the code
 * means "not a usable working directory inside the jail", so one layer
 * answers with one code, and a model probing for folders outside learns
 * nothing from the difference.
 *
 * Check-then-use race, stated plainly: between this check and the child's
 * `chdir`, another process could swap a folder on the path for a symlink
 * that leads out. Path checks alone cannot close that window (bubblewrap
 * rejects path allowlisting for the same reason); the kernel sandbox does,
 * because outside the jail there is nothing mounted to escape to. Without
 * the sandbox this check is best-effort against concurrent writers.
 *
 * @module
 */

import * as posix from "../path/mod.ts";
import { isInside } from "./is_inside.ts";
import { resolveFollowingSymlinks } from "./resolve.ts";
import type { JailResult } from "./types.ts";

function escape(reason: string): JailResult<string> {
  return { ok: false, code: "CWD_ESCAPE", reason };
}

/**
 * Resolves the requested working directory inside the jail.
 *
 * @param jailRoot The jail's real path (`policy.jailRoot`).
 * @param requested The client's cwd: undefined or "" for the jail root;
 *   relative paths start at the jail root.
 * @returns The real path to run in, or `CWD_ESCAPE` with a sentence that
 *   never reveals where a symlink outside leads.
 *
 * @example
 * ```ts
 * import { confineCwd } from "./confine_cwd.ts";
 * const cwd = await confineCwd("/srv/jail", "src");
 * // { ok: true, value: "/srv/jail/src" } when that folder exists
 * ```
 */
export async function confineCwd(
  jailRoot: string,
  requested: string | undefined,
): Promise<JailResult<string>> {
  const text = requested === undefined || requested === "" ? "." : requested;
  if (text.startsWith("~")) {
    return escape(
      `The working directory "${text}" names a home folder, which is outside the jail; htmcp expands no "~".`,
    );
  }
  if (text.includes("\0")) return escape("The working directory contains a NUL character.");
  // A path whose plain spelling (relative ones from the jail root) is
  // outside the jail is refused before any lookup, with a plain sentence. Lexical `..` handling could
  // only wrongly refuse (a symlink making it lead back inside), never
  // wrongly allow: allowing is left to the symlink-following walk below.
  if (!isInside(jailRoot, posix.resolve(jailRoot, text))) {
    return escape(`The working directory "${text}" is outside the jail.`);
  }
  const resolved = await resolveFollowingSymlinks(jailRoot, jailRoot, text);
  if (!resolved.ok) {
    return escape(
      `The working directory "${text}" cannot be shown to stay inside the jail (${resolved.why}).`,
    );
  }
  if (!isInside(jailRoot, resolved.path)) {
    return escape(`The working directory "${text}" resolves outside the jail.`);
  }
  if (!resolved.exists) {
    return escape(`The working directory "${text}" does not exist inside the jail.`);
  }
  try {
    // Synchronous: one stat of the folder the walk just resolved (budget.ts says why).
    const info = Deno.statSync(resolved.path);
    if (!info.isDirectory) return escape(`The working directory "${text}" is not a folder.`);
  } catch (error) {
    const why = error instanceof Error ? error.name : "unknown error";
    return escape(`The working directory "${text}" cannot be checked (${why}).`);
  }
  return { ok: true, value: resolved.path };
}
