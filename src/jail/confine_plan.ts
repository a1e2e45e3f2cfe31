/**
 * Carries out a `PathPlan` (from the policy's path model) against the real
 * filesystem: resolves every folder change, checks every candidate from the
 * cwd and from every folder the tool may be in, and walks the trees of
 * link-following tools. One budget (lookups and a deadline) bounds it all.
 *
 * Each folder change is resolved from the folder the tool is in at that
 * point; each candidate is checked from every folder that occurs, rather
 * than from the one in effect at its position, which can only add checks.
 *
 * @module
 */

import * as posix from "../path/mod.ts";
import type { PathPlan } from "../policy/mod.ts";
import { CheckBudget } from "./budget.ts";
import { confineArgs, type ReachedPath } from "./confine_args.ts";
import { isInside } from "./is_inside.ts";
import { resolveFollowingSymlinks } from "./resolve.ts";
import { findEscapingLink } from "./tree_walk.ts";
import type { JailResult } from "./types.ts";

/** The most distinct folders one command may change to. */
export const MAX_BASE_FOLDERS = 16;

function escape(reason: string): JailResult<never> {
  return { ok: false, code: "PATH_ESCAPE", reason };
}

/** The real paths a checked plan reaches, for checks that judge where, not whether inside. */
export interface PlanReach {
  /**
   * The cwd, then each folder change's target; `entered` when the tool works
   * in it (the cwd, `-C`), not only names it (`--git-dir`, `--work-tree`).
   */
  readonly folders: readonly { readonly path: string; readonly entered: boolean }[];
  /** Where each candidate path leads, from each of those folders. */
  readonly paths: readonly ReachedPath[];
}

/**
 * A copy that reproduces links (`cp -r`, `-a`, `-P`) makes a new link at
 * another depth, where its relative text may lead outside: refused when a
 * source is a symlink or holds one. (`-L` copies what links point to.)
 */
async function checkLinkCopies(
  jailRoot: string,
  folders: readonly { real: string }[],
  sources: readonly string[],
  budget: CheckBudget,
): Promise<JailResult<void>> {
  const refuse = (detail: string) =>
    escape(
      `The copy would make the symlink ${detail} again at another depth, where it may lead outside the jail; htmcp refuses copying links (use -L to copy what they point to).`,
    );
  const visited = new Set<string>();
  for (const folder of folders) {
    for (const text of sources) {
      const trimmed = text.replace(/\/+$/, "");
      if (trimmed === "") continue;
      const parent = await resolveFollowingSymlinks(
        jailRoot,
        folder.real,
        posix.dirname(trimmed),
        budget,
      );
      if (!parent.ok) return escape(`The source "${text}" cannot be checked (${parent.why}).`);
      if (!parent.exists) continue;
      const looked = await budget.lstat(posix.join(parent.path, posix.basename(trimmed)));
      if ("budget" in looked) {
        return escape(`The source "${text}" cannot be checked (${looked.budget}).`);
      }
      if ("error" in looked) continue; // missing: cp fails, nothing is copied
      if (looked.isSymlink) return refuse(`"${text}"`);
      if (!looked.isDirectory) continue;
      const real = posix.join(parent.path, posix.basename(trimmed));
      const found = await findEscapingLink(jailRoot, real, budget, visited, true);
      if (found !== null) return refuse(`"${found.path}" (in "${text}")`);
    }
  }
  return { ok: true, value: undefined };
}

/**
 * Checks `plan` for a command run in `cwd`.
 *
 * @param jailRoot The jail's real path.
 * @param cwd The confined real working directory.
 * @param plan From `planPathChecks`.
 * @param budget The call's lookup count and deadline.
 * @returns The folders and paths the plan reaches, or PATH_ESCAPE with a
 *   sentence naming the argument.
 */
export async function confinePlan(
  jailRoot: string,
  cwd: string,
  plan: PathPlan,
  budget: CheckBudget = new CheckBudget(),
): Promise<JailResult<PlanReach>> {
  const folders: { real: string; via: string | null; entered: boolean }[] = [
    { real: cwd, via: null, entered: true },
  ];
  // The tool's current folder: `tar -C a -C ..` is back in the cwd.
  let current = folders[0] as { real: string; via: string | null; entered: boolean };
  for (const { text, kind } of plan.bases) {
    const checked = await confineArgs(jailRoot, current.real, [text], budget);
    if (!checked.ok) {
      const where = current.via === null ? "" : ` (from the folder "${current.via}")`;
      return escape(`The folder change "${text}"${where} leaves the jail: ${checked.reason}`);
    }
    const resolved = await resolveFollowingSymlinks(jailRoot, current.real, text, budget);
    if (!resolved.ok) return escape(`The folder "${text}" cannot be resolved (${resolved.why}).`);
    let reached = folders.find((folder) => folder.real === resolved.path);
    if (reached === undefined) {
      reached = { real: resolved.path, via: text, entered: false };
      folders.push(reached);
    }
    if (kind === "chdir") {
      reached.entered = true;
      current = reached;
    }
    if (folders.length > MAX_BASE_FOLDERS) {
      return escape(
        `The command changes folder more than ${
          MAX_BASE_FOLDERS - 1
        } ways; htmcp checks at most that many.`,
      );
    }
  }
  const paths: ReachedPath[] = [];
  for (const folder of folders) {
    const checked = await confineArgs(jailRoot, folder.real, plan.candidates, budget);
    if (!checked.ok) {
      if (folder.via === null) return checked;
      return escape(`${checked.reason} (resolved from the folder "${folder.via}" it changes to)`);
    }
    paths.push(...checked.value);
  }
  const reach = {
    folders: folders.map((folder) => ({ path: folder.real, entered: folder.entered })),
    paths,
  };
  const copied = await checkLinkCopies(jailRoot, folders, plan.linkCopySources, budget);
  if (!copied.ok) return copied;
  if (plan.walks.length === 0) return { ok: true, value: reach };
  const visited = new Set<string>();
  for (const folder of folders) {
    for (const text of plan.walks) {
      const resolved = await resolveFollowingSymlinks(jailRoot, folder.real, text, budget);
      if (!resolved.ok) return escape(`The tree "${text}" cannot be checked (${resolved.why}).`);
      // Candidates already proved inside; a bare word that names no entry is no tree.
      if (!resolved.exists || !isInside(jailRoot, resolved.path)) continue;
      let isFolder: boolean;
      try {
        // Synchronous: one stat of a root the walk just resolved (budget.ts says why).
        isFolder = Deno.statSync(resolved.path).isDirectory;
      } catch {
        continue;
      }
      if (!isFolder) continue;
      const found = await findEscapingLink(jailRoot, resolved.path, budget, visited);
      if (found !== null) {
        return escape(
          `With ${
            plan.walkFlag.startsWith("-") ? `"${plan.walkFlag}"` : plan.walkFlag
          } the command follows the links in "${text}", and "${found.path}" cannot be shown to stay inside the jail: ${found.why}.`,
        );
      }
    }
  }
  return { ok: true, value: reach };
}
