/**
 * A deadline and a lookup count for one call's path checks. The checks run
 * before the command and on the model's input, so without a bound a crafted
 * argument or a huge tree would make the check itself the denial of
 * service. Running out is a refusal (the path cannot be shown to stay
 * inside), never a pass.
 *
 * @module
 */
import { nextTask } from "../concurrency/mod.ts";

/** How long one call's path checks may take in all. */
export const PATH_CHECK_DEADLINE_MS = 5_000;
/** How many `lstat`/`readlink`/`readDir` calls one call's path checks may make. */
export const MAX_PATH_LOOKUPS = 200_000;
/**
 * Synchronous lookups between two turns of the event loop (see `pace`). A
 * plain command's checks make a handful; only a long walk reaches this.
 */
export const LOOKUPS_PER_TURN = 256;

/** A folder's entries, or why there are none (`missing`: not there, or not a folder). */
export type FolderListing =
  | { readonly ok: true; readonly entries: readonly Deno.DirEntry[] }
  | { readonly ok: false; readonly missing: boolean; readonly why: string };

/**
 * Lists the real folder `folder` inside the jail `jailRoot` without
 * following a link, for glob expansion and the link-following tree walk
 * (`list_folder.ts` says why; the server's executor lists through its
 * helper, by descriptor).
 */
export type FolderLister =
  & ((jailRoot: string, folder: string, budget: CheckBudget) => Promise<FolderListing>)
  & {
    /** The same lister's walk of a whole tree in one call, when it has one (`walkTree`). */
    readonly walk?: TreeWalker;
  };

/**
 * What a tree holds that the checks look for, as real paths inside the
 * jail: every symlink (never followed; a `.git` link too) and every entry
 * named `.git` that is a folder, a file or a link (a `.git` folder is
 * descended into only when asked).
 */
export type TreeListing =
  | {
    readonly ok: true;
    readonly links: readonly string[];
    readonly gits: readonly string[];
  }
  | { readonly ok: false; readonly why: string };

/**
 * Walks the real folder `folder` inside the jail `jailRoot` without
 * following a link; into `.git` folders too when `intoGit`.
 */
export type TreeWalker = (
  jailRoot: string,
  folder: string,
  budget: CheckBudget,
  intoGit: boolean,
) => Promise<TreeListing>;

/**
 * Counts lookups against a deadline; shared by every check of one call.
 * It also remembers each `lstat` it paid for, so a path that names the same
 * folder thousands of times (`x/../x/../...`) costs one lookup per distinct
 * folder, and every check of the call sees one consistent answer.
 */
export class CheckBudget {
  readonly #deadline: number;
  readonly #deadlineMs: number;
  readonly #lookups: number;
  #lookupsLeft: number;
  #sinceTurn = 0;
  readonly #lstats = new Map<string, Deno.FileInfo | { readonly error: unknown }>();
  /** How this call lists folders; null: in this process (`listFolderInJail`). */
  readonly lister: FolderLister | null;

  /**
   * Starts a budget: a deadline from now and a number of lookups.
   *
   * @param deadlineMs Milliseconds from now.
   * @param lookups The most filesystem lookups allowed.
   * @param lister How folders are listed (the executor's, by descriptor), or
   *   null to list in this process.
   */
  constructor(
    deadlineMs: number = PATH_CHECK_DEADLINE_MS,
    lookups: number = MAX_PATH_LOOKUPS,
    lister: FolderLister | null = null,
  ) {
    this.lister = lister;
    this.#deadline = performance.now() + deadlineMs;
    this.#deadlineMs = deadlineMs;
    this.#lookups = lookups;
    this.#lookupsLeft = lookups;
  }

  /**
   * Takes one lookup. Returns null when allowed, else the sentence saying
   * which bound was hit.
   */
  spend(): string | null {
    this.#lookupsLeft--;
    if (this.#lookupsLeft < 0) {
      return `the path checks would need more than ${this.#lookups} filesystem lookups`;
    }
    if (performance.now() > this.#deadline) {
      return `the path checks did not finish within ${this.#deadlineMs} ms`;
    }
    return null;
  }

  /**
   * Lets the event loop take a turn once every `LOOKUPS_PER_TURN` calls.
   *
   * Why: the checks' lookups are synchronous (`lstat` of a name the kernel
   * has cached is a few microseconds, while each asynchronous one waited
   * for the runtime's thread pool, 0.1 to 0.25 ms per path component on a
   * loaded 2-core VM, on every call's path before anything runs). A check
   * that walks a large tree on the model's input must still not hold the
   * whole server (other calls, timers, signals) until its deadline, so
   * every lookup through `lstat` is preceded by this.
   */
  async #pace(): Promise<void> {
    if (++this.#sinceTurn < LOOKUPS_PER_TURN) return;
    this.#sinceTurn = 0;
    await nextTask();
  }

  /**
   * `lstat` through the call's cache and budget: the info, the lookup
   * error, or `{ budget }` with the sentence when the budget is spent.
   * Synchronous, paced (`#pace` says why).
   */
  async lstat(
    path: string,
  ): Promise<Deno.FileInfo | { readonly error: unknown } | { readonly budget: string }> {
    const known = this.#lstats.get(path);
    if (known !== undefined) return known;
    const spent = this.spend();
    if (spent !== null) return { budget: spent };
    await this.#pace();
    let found: Deno.FileInfo | { readonly error: unknown };
    try {
      found = Deno.lstatSync(path);
    } catch (error) {
      found = { error };
    }
    this.#lstats.set(path, found);
    return found;
  }
}
