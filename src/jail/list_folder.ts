/**
 * Lists a folder of the jail for the checks (glob expansion, the
 * link-following tree walk), never a folder a link leads to. The server's
 * calls list through the executor's helper, by descriptor
 * (`src/exec/list_beneath.ts`); this module is the way without one (the
 * operator's CLI) and the one entry point (`listFolder`) for both. The server
 * lists with its own rights, outside any sandbox: a folder swapped for a
 * link to `/root` between resolving its path and reading it would hand the
 * host's file names to the model, which the red team showed with a rename
 * loop racing `echo d/.*`, under bwrap as well.
 *
 * Deno lists only by path (no `fdopendir`; `/proc/self/fd` needs
 * `--allow-all`), so the listing is bracketed the way `open_regular.ts`
 * brackets an open: every component from the jail root down is `lstat`ed
 * (none may be a link, the last must be a folder) and its device and inode
 * kept; the folder is listed; the walk is made again and must see the same
 * components; then all of it once more, and only entries both listings hold
 * are returned. What remains is a link swapped in and out inside both
 * listings with every walk between them seeing the folder: about 1 listing
 * in 400 under a dedicated rename loop (SECURITY.md). Only a listing by
 * descriptor (`openat` with `O_NOFOLLOW` per component) closes it. Each
 * name is looked up again, under the jail's resolver, before it is used as
 * a path.
 *
 * @module
 */
import * as posix from "../path/mod.ts";
import { nextTask } from "../concurrency/mod.ts";
import type { CheckBudget, FolderListing, TreeListing } from "./budget.ts";
import { describeError, isMissing } from "./resolve.ts";

type Walk = { readonly ok: true; readonly identity: string } | {
  readonly ok: false;
  readonly missing: boolean;
  readonly why: string;
};

/** lstat of every component from below the jail root to `folder`: no link, a folder at the end. */
function walk(jailRoot: string, folder: string): Walk {
  const relative = posix.relative(jailRoot, folder);
  const parts = relative === "" ? [] : relative.split("/");
  let identity = "";
  for (let depth = 0; depth <= parts.length; depth++) {
    const path = posix.join(jailRoot, ...parts.slice(0, depth));
    let info: Deno.FileInfo;
    try {
      // Synchronous: a handful of cached lookups (budget.ts says why).
      info = Deno.lstatSync(path);
    } catch (error) {
      return { ok: false, missing: isMissing(error), why: describeError(error) };
    }
    if (info.isSymlink) return { ok: false, missing: false, why: "it is reached through a link" };
    if (!info.isDirectory) {
      return { ok: false, missing: depth === parts.length, why: "it is not a folder" };
    }
    identity += `${info.dev}:${info.ino}/`;
  }
  return { ok: true, identity };
}

/**
 * The entries of the real folder `folder` inside the jail, listed only if
 * it is that folder before and after the listing.
 *
 * @param jailRoot The jail's real path.
 * @param folder A real path inside the jail (symlinks resolved).
 * @param budget The call's budget: one lookup per entry listed.
 * @returns The entries, or why not (`missing` when it is not there or not a folder).
 */
export async function listFolderInJail(
  jailRoot: string,
  folder: string,
  budget: CheckBudget,
): Promise<FolderListing> {
  // The listing below is synchronous (it keeps the race windows short):
  // let the event loop take a turn first, as the budget's own lookups do.
  await nextTask();
  const first = walk(jailRoot, folder);
  if (!first.ok) return first;
  // Twice, each bracketed by walks, and only names both listings agree on:
  // a listing that met a swapped-in link would have to be matched by a
  // second one that met it too, with every walk between them seeing the
  // folder. Synchronous, so the windows are system calls, not event-loop
  // turns (budget.ts says why; the listing is paid for per entry).
  const listings: Deno.DirEntry[][] = [];
  for (let round = 0; round < 2; round++) {
    const entries: Deno.DirEntry[] = [];
    try {
      for (const entry of Deno.readDirSync(folder)) {
        const spent = budget.spend();
        if (spent !== null) return { ok: false, missing: false, why: spent };
        entries.push(entry);
      }
    } catch (error) {
      return { ok: false, missing: false, why: `it cannot be listed (${describeError(error)})` };
    }
    const again = walk(jailRoot, folder);
    if (!again.ok || again.identity !== first.identity) {
      return { ok: false, missing: false, why: "it changed while it was listed" };
    }
    listings.push(entries);
  }
  // Deno decodes a name that is not UTF-8 leniently (U+FFFD for each bad
  // byte): no path built from it names that entry, so the listing is
  // refused rather than walked past it (a link hidden so led to /etc).
  if (listings.some((entries) => entries.some((entry) => entry.name.includes("\uFFFD")))) {
    return { ok: false, missing: false, why: "it holds a name that is not UTF-8" };
  }
  const second = new Set(listings[1]!.map((entry) => `${entry.name}\0${entryKind(entry)}`));
  const entries = listings[0]!.filter((entry) => second.has(`${entry.name}\0${entryKind(entry)}`));
  return { ok: true, entries };
}

function entryKind(entry: Deno.DirEntry): string {
  return entry.isSymlink ? "l" : entry.isDirectory ? "d" : entry.isFile ? "f" : "o";
}

/**
 * Lists `folder` the call's way: through the budget's lister (the server's
 * helper, by descriptor) when it has one, else in this process.
 *
 * @param jailRoot The jail's real path.
 * @param folder A real path inside the jail.
 * @param budget The call's budget and lister.
 * @returns The entries, or why not.
 */
export function listFolder(
  jailRoot: string,
  folder: string,
  budget: CheckBudget,
): Promise<FolderListing> {
  return (budget.lister ?? listFolderInJail)(jailRoot, folder, budget);
}

/**
 * Walks the tree at `folder` the call's way: in one call of the budget's
 * lister when it can (the server's helper, `--walk-beneath`), else folder
 * by folder through `listFolder` (the operator's CLI). Both report the same:
 * links are never followed, and `.git` folders are descended into only
 * when `intoGit`.
 *
 * @param jailRoot The jail's real path.
 * @param folder A real folder inside the jail.
 * @param budget The call's budget and lister: every folder listed and
 *   every entry reported costs a lookup.
 * @param intoGit Walk the contents of `.git` folders too (a search for
 *   links), or stop at them (the repository check's search).
 * @returns The tree's links and `.git` entries, or why not.
 */
export async function walkTree(
  jailRoot: string,
  folder: string,
  budget: CheckBudget,
  intoGit = false,
): Promise<TreeListing> {
  const walk = budget.lister?.walk;
  if (walk !== undefined) return await walk(jailRoot, folder, budget, intoGit);
  const links: string[] = [];
  const gits: string[] = [];
  const pending = [folder];
  while (pending.length > 0) {
    const current = pending.pop() as string;
    const listed = await listFolder(jailRoot, current, budget);
    if (!listed.ok) return { ok: false, why: `"${current}" ${listed.why}` };
    for (const entry of listed.entries) {
      const path = `${current}/${entry.name}`;
      const git = entry.name === ".git";
      if (git && (entry.isDirectory || entry.isFile || entry.isSymlink)) gits.push(path);
      if (entry.isSymlink) links.push(path);
      else if (entry.isDirectory && (!git || intoGit)) pending.push(path);
    }
  }
  return { ok: true, links, gits };
}
