/**
 * Without the kernel sandbox, only git works inside a git folder. git reads
 * paths and options from its own files and acts on them unchecked
 * (`src/jail/git_folders.ts` lists them), so a file written there by
 * another command (`tr ... > .git/MERGE_RR`, `cp crafted .git/index`) would
 * make the next git command read, write or delete any host path the server
 * can. git writes those files only from input it checks itself.
 *
 * So, in mode `none`, a command's working folder, every folder it changes
 * to, every path argument and every redirection target must not be a git
 * folder or inside one. git alone may name a git folder itself
 * (`--git-dir repo/.git`), never work in one (`-C repo/.git`, a cwd there:
 * `git apply` then writes the patch's paths into the git folder) nor name a
 * file inside one: `git archive -o .git/MERGE_RR` writes what the model
 * chose. Under the kernel sandbox, a path git takes from its files reaches
 * only the jail.
 *
 * @module
 */
import * as posix from "../path/mod.ts";
import { type CheckBudget, gitFolderHolding } from "../jail/mod.ts";

/** One place a command may open or be in, with how to name it in a refusal. */
export interface NamedPlace {
  /** The real path (symlinks resolved), inside the jail. */
  readonly path: string;
  /** How the refusal names it: `the argument ".git/x"`, `the working folder`. */
  readonly what: string;
  /**
   * True when git only names this place (a path argument, `--git-dir`),
   * false when the command works in it (its cwd, `-C`): git working in a
   * git folder has no work tree and writes there (`git apply` with the
   * patch's paths, round eight).
   */
  readonly named: boolean;
}

/**
 * The first place that is a git folder or inside one, as a refusal sentence,
 * or null when none is.
 *
 * @param jailRoot The jail's real path.
 * @param places Where the command may be and what it may open.
 * @param gitItself True for git: a git folder itself (a folder, not a
 *   gitfile) that git only names is allowed; one it works in, or a path
 *   inside one, is not.
 * @param budget The call's lookup budget.
 * @returns The refusal sentence, or null.
 */
export async function gitFolderRefusal(
  jailRoot: string,
  places: readonly NamedPlace[],
  gitItself: boolean,
  budget: CheckBudget,
): Promise<string | null> {
  for (const { path, what, named } of places) {
    const held = await gitFolderHolding(jailRoot, path, budget);
    if (!held.ok) {
      return `${what} cannot be shown to be outside every git folder (${held.why}).`;
    }
    if (held.folder === null) continue;
    // git may name a git folder itself (`--git-dir=.git`, `-C .git`), but
    // only a folder: a `.git` gitfile named to git (`git merge-file
    // sub/.git ...`) would be rewritten to lead git elsewhere (round seven).
    if (gitItself && named && held.folder === path && await isFolder(path, budget)) continue;
    const folder = shownInJail(jailRoot, held.folder);
    return `${what} is ${
      held.folder === path ? "the git folder" : "inside the git folder"
    } "${folder}"; without the kernel sandbox only git itself works there, since git acts on the paths and options its own files hold (use git's own commands; git may name the folder itself, not a file in it).`;
  }
  return null;
}

async function isFolder(path: string, budget: CheckBudget): Promise<boolean> {
  const info = await budget.lstat(path);
  return !("budget" in info) && !("error" in info) && info.isDirectory;
}

/** `path` as the refusals show it: relative to the jail root (`.` for the root). */
export function shownInJail(jailRoot: string, path: string): string {
  return posix.relative(jailRoot, path) || ".";
}
