/**
 * The repository check: before git runs, htmcp reads the repository git
 * will use the way git finds it, and refuses the command when that
 * repository's own files would make git run a program or read or write
 * outside the jail. A repository in the jail is untrusted input. Refused:
 *
 * - a `.git` file (gitfile), `commondir`, or `--git-dir` leading outside the jail;
 * - configuration git cannot be kept from using (`git_config_rules.ts`):
 *   includes, URL rewrites, `remote.*.uploadpack`/
 *   `receivepack`/`vcs`, local or `file://` remote URLs, and every key that
 *   names a program;
 * - any configuration value that, read as a path (as `blame.ignoreRevsFile`,
 *   `commit.template`, `core.excludesFile`, `mailmap.file`, ... are), leads
 *   outside the jail from the cwd, the work tree or the git folder, following
 *   symlinks; `~`, `%(prefix)` and `file:` values are refused outright;
 * - `objects/info/alternates` entries leading outside the jail;
 * - a rebase or cherry-pick in progress whose saved state would make git
 *   start a program at `--continue` (`git_programs.ts`): an `exec` line in
 *   its todo list, or a merge strategy git does not run itself;
 * - the same, for every submodule git folder (`modules/...`), every
 *   submodule `.gitmodules` lists or the index names, and every repository
 *   nested anywhere in every work tree git may take, since git runs inside
 *   those too;
 * - an autostash a merge or rebase in progress saved, which git applies
 *   with a status listing that enters submodules;
 * - a `core.worktree` (read from the git folder) leading outside the jail;
 * - a work tree (`--work-tree`, `git worktree add PATH`, `core.worktree`) inside a git
 *   folder, which would let checkout write `.git/config` or hooks;
 * - a symlink anywhere in a git folder, in every mode: git writes
 *   `COMMIT_EDITMSG`, refs and logs by name, through any link in their place;
 * - without the kernel sandbox, state files whose paths git joins to the
 *   work tree unchecked (`git_state_files.ts`): a `MERGE_RR` or index entry
 *   that is not a clean relative path, a `rebase-apply/apply-opt` holding an
 *   option `git am` does not save itself, a split index, and a
 *   `worktrees/<id>/gitdir` or `commondir` leading out of the jail;
 * - without the kernel sandbox, `init --bare` or `--separate-git-dir` naming
 *   a folder that already holds files (the rest of a git folder's files are
 *   kept from other commands by `src/plan/git_folder_paths.ts`).
 *
 * Discovery is over-inclusive on purpose: every `.git` (folder or file) and
 * every folder that looks like a git folder from the cwd up to the jail root
 * is inspected, not only the one git picks; the executor sets
 * `GIT_CEILING_DIRECTORIES` to the jail's parent so git itself never looks
 * above the jail. The policy stays pure: all file access goes through the
 * injected `GitRepositoryReader`. Like every check-then-use test, a command
 * running at the same time can change the files after the check; the
 * kernel sandbox is what contains that.
 *
 * @module
 */

import * as posix from "../path/mod.ts";
import { parseGitConfig } from "./git_config.ts";
import { refusedConfigEntry } from "./git_config_rules.ts";
import { splitGitArgs } from "./git_args.ts";
import {
  externalStrategyArgument,
  isBuiltinMergeStrategy,
  pullRebasingMerges,
  todoExecLine,
  todoOctopusLine,
} from "./git_programs.ts";
import { explicitGitAddresses, isLocalGitAddress, isNetworkGitUrl } from "./git_urls.ts";
import {
  applyOptWords,
  indexEntryNames,
  type IndexNames,
  isCleanTreePath,
  mergeRrPaths,
  unsafeApplyOption,
} from "./git_state_files.ts";

/** Where a path leads after following every symlink (as `src/jail`'s resolver reports). */
export type GitPathResolution =
  | { readonly ok: true; readonly path: string; readonly exists: boolean }
  | { readonly ok: false; readonly why: string };

/** The file access the repository check needs, injected by the check step. */
export interface GitRepositoryReader {
  /**
   * Whether the absolute `path` is the jail or below it: the jail's own
   * segment-wise predicate, so that this check and the path check agree.
   */
  isInsideJail(path: string): boolean;
  /** Resolves `path` (absolute, or relative to the real folder `base`), following symlinks. */
  resolve(base: string, path: string): Promise<GitPathResolution>;
  /** What is at `path` itself (a symlink is not followed). */
  kind(path: string): Promise<"file" | "directory" | "symlink" | "missing" | "other">;
  /**
   * The UTF-8 text of the file at the real path `path`, null when it does not
   * exist, or an error sentence (unreadable, larger than `limitBytes`, not UTF-8).
   */
  readText(path: string, limitBytes: number): Promise<string | null | { readonly error: string }>;
  /** The bytes of the file at the real path `path`, as `readText` reads it, without decoding. */
  readBytes(
    path: string,
    limitBytes: number,
  ): Promise<Uint8Array | null | { readonly error: string }>;
  /** The names in the real folder `path`, or an error sentence. */
  list(path: string): Promise<readonly string[] | { readonly error: string }>;
  /**
   * The entries of the real folder `path` with what each is (a symlink not
   * followed), as one listing reports them, or an error sentence.
   */
  entries(path: string): Promise<readonly GitFolderEntry[] | { readonly error: string }>;
  /**
   * The whole tree at the real folder `path`, links never followed: every
   * symlink, and every entry named `.git` that is a folder, a file or a
   * link (not descended into), as real paths; or an error sentence.
   */
  walk(
    path: string,
  ): Promise<
    { readonly links: readonly string[]; readonly gits: readonly string[] } | {
      readonly error: string;
    }
  >;
}

/** One entry of a folder, as `GitRepositoryReader.entries` lists it. */
export interface GitFolderEntry {
  /** The entry's name in its folder. */
  readonly name: string;
  /** What the entry itself is: a symlink is reported as one, never followed. */
  readonly kind: "file" | "directory" | "symlink" | "other";
}

/** The check's verdict. */
export type GitRepositoryVerdict = { readonly ok: true } | {
  readonly ok: false;
  readonly reason: string;
};

/** Where the command runs. */
export interface GitRepositoryContext {
  /** The jail's real path. */
  readonly jailRoot: string;
  /** The confined real cwd. */
  readonly cwd: string;
  /** git's arguments (argv without the command word), as typed. */
  readonly args: readonly string[];
  /**
   * True under the kernel sandbox, where a symlink leading out of the jail
   * reaches nothing writable of the host; without it (the default) every
   * git folder is searched for such links.
   */
  readonly sandboxed?: boolean;
}

const CONFIG_LIMIT_BYTES = 256 * 1024;
const MAX_CONFIG_ENTRIES = 2_000;
/** git follows alternates five levels deep (`object-file.c`); deeper is refused. */
const MAX_ALTERNATE_DEPTH = 5;
const MAX_MODULE_DEPTH = 6;
const MAX_MODULE_FOLDERS = 256;
/** The largest index read without the kernel sandbox; a larger one is refused, not skipped. */
const INDEX_LIMIT_BYTES = 256 * 1024 * 1024;

class Refusal extends Error {}

function refuse(reason: string): never {
  throw new Refusal(reason);
}

class Inspection {
  readonly #reader: GitRepositoryReader;
  /**
   * The command ends a rebase, cherry-pick or revert in progress (`--abort`,
   * `--quit`) without acting on its saved state: the way out of a refused one.
   */
  readonly endsSequence: boolean;
  /**
   * Without the kernel sandbox: git folders must be named `.git`, and their
   * state files naming work-tree paths are read (`pathStateFiles`).
   */
  readonly searchLinks: boolean;
  /** The command is `rebase --quit` or `merge --quit`, which stores a saved autostash unapplied. */
  readonly quitsAutostash: boolean;
  /** Real paths of the git folders and common folders seen, for the work-tree rule. */
  readonly gitDirs: string[] = [];
  /** Remote names configured in any inspected repository (`[remote "name"]`). */
  readonly remoteNames = new Set<string>();
  readonly #jailRoot: string;
  constructor(
    reader: GitRepositoryReader,
    jailRoot: string,
    endsSequence: boolean,
    searchLinks: boolean,
    quitsAutostash: boolean,
  ) {
    this.#reader = reader;
    this.#jailRoot = jailRoot;
    this.endsSequence = endsSequence;
    this.searchLinks = searchLinks;
    this.quitsAutostash = quitsAutostash;
  }

  /**
   * Without the kernel sandbox, git may use only a git folder named `.git`
   * or inside one (`.git/worktrees/<id>`, `.git/modules/<name>`): no command
   * but git can write in those by name alone (`src/plan/git_folder_paths.ts`),
   * and git never checks out a path named `.git`. A git folder under any
   * other name can be built by other commands, file by file or in one plan,
   * or filled by a checkout (`x.git/MERGE_RR` is a path git writes).
   */
  namedGitFolder(folder: string, what: string): void {
    if (!this.searchLinks) return;
    const segments = posix.relative(this.#jailRoot, folder).split("/");
    if (!segments.includes(".git")) {
      refuse(
        `${what} is not named .git nor inside one; without the kernel sandbox git may use only such a git folder (bare repositories and --separate-git-dir are not used)`,
      );
    }
  }

  /** Resolves and requires the result inside the jail; `what` names it in the refusal. */
  async insideJail(
    base: string,
    path: string,
    what: string,
    quoted: "quoted" | "read from a file" = "quoted",
  ): Promise<string> {
    // Text the server read from a file is never quoted back: a read the
    // jail's link-free open did not catch would otherwise hand a host file's
    // content to the model (`src/jail/open_regular.ts` says what remains).
    const named = quoted === "quoted" ? `${what} "${path}"` : what;
    if (!this.#reader.isInsideJail(posix.resolve(base, path))) {
      refuse(`${named} leads outside the jail`);
    }
    const resolved = await this.#reader.resolve(base, path);
    if (!resolved.ok) {
      refuse(`${named} cannot be shown to stay inside the jail (${resolved.why})`);
    }
    if (!this.#reader.isInsideJail(resolved.path)) {
      refuse(`${named} leads outside the jail`);
    }
    return resolved.path;
  }

  /**
   * Reads a small file of the repository, never through a symlink leading
   * out: a `.git/config` linked to a host file must not be read, let alone
   * quoted in a refusal.
   */
  async readSmall(path: string, what: string): Promise<string | null> {
    const real = await this.insideJail("/", path, what);
    if ((await this.#reader.kind(real)) === "missing") return null;
    const text = await this.#reader.readText(real, CONFIG_LIMIT_BYTES);
    if (text !== null && typeof text === "object") refuse(`${what} cannot be read (${text.error})`);
    return text;
  }

  /** A `.git` file (`gitdir: PATH`, relative to its folder) -> the git folder it names. */
  async followGitFile(file: string): Promise<string> {
    const text = await this.readSmall(file, `the gitfile "${file}"`);
    const match = /^gitdir: (.*?)\r?\n?$/.exec(text ?? "");
    if (match === null) refuse(`the gitfile "${file}" is not "gitdir: PATH"`);
    return await this.insideJail(
      posix.dirname(file),
      match[1] as string,
      `the folder named by the gitfile`,
      "read from a file",
    );
  }

  /** Inspects one git folder, its common folder, configuration and alternates. */
  async gitDir(gitDir: string, bases: readonly string[]): Promise<void> {
    if (!this.#inspected.has(gitDir)) {
      this.#inspected.add(gitDir);
      await this.#gitFolder(gitDir, bases);
    }
    // The work tree: the repository's own core.worktree when it names one
    // (an absorbed submodule's always does), else the folder it was found
    // from. Submodules are looked for there (round ten: two levels down,
    // and under a moved work tree, they were looked for beside .git).
    // Every work tree git may take, not the one htmcp thinks it will: the
    // folder it was found from (or --work-tree) and each core.worktree read,
    // config.worktree's too (round twelve hid the real work tree behind a
    // config.worktree git ignored, and behind a --work-tree that beats
    // core.worktree). Each work tree a git folder is reached from is
    // searched, not only the first: round thirteen reached the top
    // repository's git folder again from a gitfile in a subfolder, whose
    // own .gitmodules unmasked a repository nested below it.
    const found = bases[bases.length - 1] as string;
    const tops = [...new Set([...(this.#worktrees.get(gitDir) ?? []), found])];
    for (const top of tops) {
      const pair = `${gitDir}\0${top}`;
      if (this.#searched.has(pair)) continue;
      this.#searched.add(pair);
      await this.gitmodules(top, [...bases, top]);
      await this.gitlinks(gitDir, top, [...bases, top]);
      await this.nestedRepositories(top, [...bases, top]);
    }
  }

  /** The git folders inspected so far (their files, once each). */
  readonly #inspected = new Set<string>();
  /** The work trees searched so far, each with the git folder it was reached from. */
  readonly #searched = new Set<string>();

  /** One git folder's own files: its common folder, configuration, state and alternates. */
  async #gitFolder(gitDir: string, bases: readonly string[]): Promise<void> {
    this.namedGitFolder(
      gitDir,
      `the git folder "${posix.relative(this.#jailRoot, gitDir) || "."}"`,
    );
    if (!this.gitDirs.includes(gitDir)) this.gitDirs.push(gitDir);
    const commonText = await this.readSmall(`${gitDir}/commondir`, "the commondir file");
    const common = commonText === null ? gitDir : await this.insideJail(
      gitDir,
      commonText.replace(/\r?\n$/, ""),
      "the commondir",
      "read from a file",
    );
    if (!this.gitDirs.includes(common)) {
      this.namedGitFolder(common, "the common folder a commondir file names");
      this.gitDirs.push(common);
    }
    const files = [
      ...new Set([`${common}/config`, `${gitDir}/config.worktree`, `${common}/config.worktree`]),
    ];
    for (const file of files) await this.configFile(file, gitDir, [...bases, gitDir]);
    if (!this.endsSequence) await this.sequencerState(gitDir);
    if (!this.quitsAutostash) await this.savedAutostash(gitDir);
    await this.linksInGitFolder(gitDir);
    if (common !== gitDir) await this.linksInGitFolder(common);
    if (this.searchLinks) await this.pathStateFiles(gitDir, common);
    await this.alternates(`${common}/objects`, 0);
    // Submodules' git folders (`modules/<name>`, nested for nested
    // submodules): status, diff and fetch run git inside them too.
    await this.modules(`${common}/modules`, bases, 0);
    await this.linkedWorkTrees(common, bases);
  }

  /**
   * The repository's linked work trees (`worktrees/<id>`, made by `git
   * worktree add`), each a git folder of its own with its own
   * `config.worktree`, paired with the work tree its `gitdir` file names:
   * git run from the main work tree starts a git in them (`worktree remove`
   * asks the linked one's status first; round fifteen ran a filter its
   * config.worktree named that way), so each is inspected and its work tree
   * searched as any other.
   */
  async linkedWorkTrees(common: string, bases: readonly string[]): Promise<void> {
    const worktrees = `${common}/worktrees`;
    if ((await this.kind(worktrees)) !== "directory") return;
    const names = await this.#reader.list(await this.real(worktrees));
    if (!Array.isArray(names)) refuse(`the folder "${worktrees}" cannot be listed`);
    for (const name of names as readonly string[]) {
      const admin = await this.real(`${worktrees}/${name}`);
      if ((await this.kind(admin)) !== "directory") continue;
      const text = await this.readSmall(`${admin}/gitdir`, `the gitdir file of a work tree`);
      // Without a gitdir file it is still a git folder git may be run in.
      if (text === null) {
        await this.gitDir(admin, bases);
        continue;
      }
      // gitdir names the linked work tree's `.git` gitfile; its folder is the work tree.
      const dotGit = await this.insideJail(
        admin,
        text.replace(/\r?\n$/, ""),
        `the gitdir file of the work tree "${name}"`,
        "read from a file",
      );
      await this.gitDir(admin, [...bases, posix.dirname(dotGit)]);
    }
  }

  /** The work trees each git folder's configuration names (core.worktree). */
  readonly #worktrees = new Map<string, string[]>();

  readonly #indexes = new Map<string, IndexNames[]>();

  /** The readings of `gitDir`'s index (SHA-1 and SHA-256, those that fit), once per check. */
  async index(gitDir: string): Promise<IndexNames[]> {
    const known = this.#indexes.get(gitDir);
    if (known !== undefined) return known;
    const real = await this.insideJail("/", `${gitDir}/index`, "the index");
    let readings: IndexNames[] = [];
    if ((await this.#reader.kind(real)) !== "missing") {
      const bytes = await this.#reader.readBytes(real, INDEX_LIMIT_BYTES);
      if (bytes !== null) {
        if (!(bytes instanceof Uint8Array)) refuse(`the index cannot be read (${bytes.error})`);
        readings = [indexEntryNames(bytes, 20), indexEntryNames(bytes, 32)].filter((r) =>
          r !== null
        );
        if (readings.length === 0) refuse("the index cannot be read as git reads it");
      }
    }
    this.#indexes.set(gitDir, readings);
    return readings;
  }

  /**
   * The submodules the index names (gitlinks), `.gitmodules` or not: git
   * status and diff run a git inside each, which reads that repository's own
   * configuration (round nine ran a planted filter driver this way).
   */
  async gitlinks(gitDir: string, top: string, bases: readonly string[]): Promise<void> {
    for (const reading of await this.index(gitDir)) {
      for (const name of reading.gitlinks) {
        if (!isCleanTreePath(name)) {
          refuse("the index names a submodule outside the work tree");
        }
        await this.repositoryAt(`${top}/${name}`, bases);
      }
    }
  }

  /**
   * The repository whose `.git` (folder or gitfile) is in `folder`, if any:
   * git may enter it. Returns whether there was one.
   */
  async repositoryAt(folder: string, bases: readonly string[]): Promise<boolean> {
    const dotGit = `${folder}/.git`;
    const kind = await this.kind(dotGit);
    if (kind === "directory") await this.gitDir(await this.real(dotGit), [...bases, folder]);
    else if (kind === "file") {
      if (await this.isSymlink(dotGit)) refuse(`"${dotGit}" is a symlink to a gitfile`);
      await this.gitDir(await this.followGitFile(dotGit), [...bases, folder]);
    } else return false;
    return true;
  }

  /**
   * Every repository nested anywhere in the work tree `top`, whether or not
   * the index or `.gitmodules` names it now: a command can write both
   * before it lists the work tree's status (round twelve: `stash pop`
   * wrote a gitlink and a `.gitmodules` unmasking it, then its status
   * entered the nested repository, whose filter ran). The walk does not
   * follow links, as git does not past one; a link to a folder in the
   * jail that holds a repository is inspected as one (a submodule path
   * may be such a link). Each nested repository walks its own work tree.
   */
  async nestedRepositories(top: string, bases: readonly string[]): Promise<void> {
    // Nothing is skipped: not a folder merely named like a git folder
    // (`.GIT`, which git on Linux takes for an ordinary folder: round
    // fourteen hid a repository under one), nor a git folder taken as its
    // own work tree (a gitfile `gitdir: .`, or `--git-dir=.`, which git
    // uses as a work tree unless core.bare says otherwise: round sixteen).
    if ((await this.kind(top)) !== "directory") return;
    // One walk of the whole tree (the helper's, in one call): a listing per
    // folder cost about a millisecond each, seconds for a work tree of
    // thousands of folders.
    const realTop = await this.real(top);
    const tree = await this.#reader.walk(realTop);
    if ("error" in tree) refuse(`the work tree cannot be searched (${tree.error})`);
    for (const dotGit of tree.gits) {
      const folder = posix.dirname(dotGit);
      if (folder === realTop) continue;
      // A nested repository's own inspection searches its work tree (again).
      // Listed, but neither a folder nor a gitfile once looked at: never
      // assumed to be nothing.
      if (!(await this.repositoryAt(folder, bases))) refuse(`"${dotGit}" cannot be inspected`);
    }
    for (const link of tree.links) {
      const resolved = await this.#reader.resolve(posix.dirname(link), posix.basename(link));
      if (!resolved.ok || !this.#reader.isInsideJail(resolved.path)) continue;
      if ((await this.#reader.kind(resolved.path)) !== "directory") continue;
      if ((await this.#reader.kind(`${resolved.path}/.git`)) === "missing") continue;
      await this.repositoryAt(resolved.path, bases);
    }
  }

  /**
   * An autostash saved by a merge or rebase in progress: git applies it when
   * that ends (continue, skip, abort, the commit that concludes a merge) by
   * a `git stash apply` of its own, whose status listing enters the
   * submodules a `.gitmodules` unmasks (red team, round twelve). htmcp's
   * runs never save one (autostash is off and guarded); a repository handed
   * over with one is refused but for `--quit`, which keeps it in the stash list.
   */
  async savedAutostash(gitDir: string): Promise<void> {
    for (const file of ["rebase-merge/autostash", "rebase-apply/autostash", "MERGE_AUTOSTASH"]) {
      if ((await this.#reader.kind(await this.real(`${gitDir}/${file}`))) !== "missing") {
        refuse(
          `a merge or rebase in progress saved an autostash ("${file}"), which git would apply with a status listing that enters submodules; git rebase --quit or git merge --quit keeps it in the stash list`,
        );
      }
    }
  }

  /**
   * A rebase's or cherry-pick's saved state, which `--continue` acts on: it
   * lives in the work tree's own git folder and is as writable as any file.
   */
  async sequencerState(gitDir: string): Promise<void> {
    const lists = [
      [`${gitDir}/rebase-merge/git-rebase-todo`, "rebase", "git rebase --abort"],
      [`${gitDir}/sequencer/todo`, "cherry-pick or revert", "git cherry-pick --abort"],
    ] as const;
    for (const [list, what, abort] of lists) {
      const text = await this.readSmall(list, `the todo list "${list}"`);
      const exec = text === null ? null : todoExecLine(text);
      if (exec !== null) {
        refuse(
          `the todo list of the ${what} in progress ("${list}") has an exec line, which runs a shell command; ${abort} ends it`,
        );
      }
      if (text !== null && todoOctopusLine(text) !== null) {
        refuse(
          `the todo list of the ${what} in progress ("${list}") merges more than one parent in one line, which git does with the octopus strategy, a shell script; ${abort} ends it`,
        );
      }
    }
    const saved = await this.readSmall(`${gitDir}/rebase-merge/strategy`, "the rebase's strategy");
    if (saved !== null && !isBuiltinMergeStrategy(saved)) {
      refuse(
        `the rebase in progress uses a merge strategy git runs as a program (built in: ort, recursive, ours, subtree); git rebase --abort ends that rebase`,
      );
    }
    const opts = await this.readSmall(`${gitDir}/sequencer/opts`, "the cherry-pick's options");
    if (opts !== null) {
      const parsed = parseGitConfig(opts);
      if (!parsed.ok) {
        refuse(`the cherry-pick's options cannot be read as git reads them: ${parsed.why}`);
      }
      for (const entry of parsed.entries) {
        if (entry.name === "strategy" && !isBuiltinMergeStrategy(entry.value ?? "")) {
          refuse(
            `the cherry-pick or revert in progress uses a merge strategy git runs as a program (built in: ort, recursive, ours, subtree); git cherry-pick --abort ends it`,
          );
        }
      }
    }
  }

  /**
   * Without the kernel sandbox: the state files git takes work-tree paths or
   * `git apply` options from without checking them (`git_state_files.ts`).
   * A model cannot write them (only git works in a git folder); a
   * repository handed to the jail may hold them already.
   */
  async pathStateFiles(gitDir: string, common: string): Promise<void> {
    const mergeRr = await this.readSmall(`${gitDir}/MERGE_RR`, "the MERGE_RR file");
    if (mergeRr !== null) {
      const paths = mergeRrPaths(mergeRr);
      if (paths === null) refuse("the MERGE_RR file cannot be read as git reads it");
      if (!paths.every(isCleanTreePath)) {
        refuse("the MERGE_RR file names a path outside the work tree, which rerere would copy");
      }
    }
    const applyOpt = await this.readSmall(
      `${gitDir}/rebase-apply/apply-opt`,
      "the apply-opt file",
    );
    if (applyOpt !== null) {
      const words = applyOptWords(applyOpt);
      if (words === null) refuse("the apply-opt file cannot be read as git reads it");
      if (unsafeApplyOption(words) !== null) {
        refuse(
          "the apply-opt file of the git am in progress holds an option git am does not save itself; git am --abort ends it",
        );
      }
    }
    await this.indexNames(gitDir);
    const worktrees = `${common}/worktrees`;
    if ((await this.kind(worktrees)) === "directory") {
      const names = await this.#reader.list(await this.real(worktrees));
      if (!Array.isArray(names)) refuse(`the folder "${worktrees}" cannot be listed`);
      for (const name of names as readonly string[]) {
        const folder = `${worktrees}/${name}`;
        if ((await this.kind(folder)) !== "directory") continue;
        for (const file of ["gitdir", "commondir"]) {
          const text = await this.readSmall(`${folder}/${file}`, `the ${file} file of a work tree`);
          if (text === null) continue;
          await this.insideJail(
            folder,
            text.replace(/\r?\n$/, ""),
            `the ${file} file of the work tree "${name}"`,
            "read from a file",
          );
        }
      }
    }
  }

  /** The index's entry names must be clean relative paths, as git writes them. */
  async indexNames(gitDir: string): Promise<void> {
    // SHA-1 or SHA-256 object names: every reading that fits is checked.
    for (const reading of await this.index(gitDir)) {
      if (reading.split) {
        refuse(
          "the index is split (core.splitIndex), which htmcp does not read without the kernel sandbox",
        );
      }
      if (!reading.names.every(isCleanTreePath)) {
        refuse("the index names a path outside the work tree, which checkout or diff would open");
      }
    }
  }

  /**
   * Symlinks anywhere in a git folder, in every mode: git writes its own
   * files there (`COMMIT_EDITMSG`, `index`, refs, logs, `lost-found`, a
   * rebase's state) by name, so a link planted in their place makes git
   * write through it. git itself makes none. Without the kernel sandbox one
   * leading out of the jail wrote host files; under it, one leading to
   * `config` let a `git commit` write a filter the next git in the same
   * call ran (red team, round nineteen). The whole folder is walked in one
   * call of the helper.
   */
  async linksInGitFolder(gitDir: string): Promise<void> {
    const tree = await this.#reader.walk(gitDir);
    if ("error" in tree) refuse(`the git folder "${gitDir}" cannot be searched (${tree.error})`);
    const link = tree.links[0];
    if (link !== undefined) {
      refuse(
        `the git folder holds a symlink ("${
          posix.relative(this.#jailRoot, link)
        }"), through which git would write a file it names; git makes none`,
      );
    }
  }

  #visited = 0;

  async modules(folder: string, bases: readonly string[], depth: number): Promise<void> {
    if ((await this.kind(folder)) !== "directory") return;
    if (depth > MAX_MODULE_DEPTH || ++this.#visited > MAX_MODULE_FOLDERS) {
      refuse("the repository holds more submodule folders than htmcp vets");
    }
    const names = await this.#reader.list(await this.real(folder));
    if (!Array.isArray(names)) refuse(`the folder "${folder}" cannot be listed`);
    for (const name of names as readonly string[]) {
      const entry = await this.real(`${folder}/${name}`);
      if ((await this.kind(entry)) !== "directory") continue;
      if ((await this.kind(`${entry}/HEAD`)) !== "missing") await this.gitDir(entry, bases);
      await this.modules(entry, bases, depth + 1);
      await this.modules(`${entry}/modules`, bases, depth + 1);
    }
  }

  /** The submodules `.gitmodules` lists, whose own `.git` git enters. */
  async gitmodules(top: string, bases: readonly string[]): Promise<void> {
    const text = await this.readSmall(`${top}/.gitmodules`, "the .gitmodules file");
    if (text === null) return;
    const parsed = parseGitConfig(text);
    if (!parsed.ok) refuse(`the .gitmodules file cannot be read as git reads it: ${parsed.why}`);
    if (parsed.entries.length > MAX_CONFIG_ENTRIES) {
      refuse("the .gitmodules file is too large to vet");
    }
    for (const entry of parsed.entries) {
      if (entry.section !== "submodule" || entry.name !== "path" || entry.value === null) continue;
      const folder = await this.insideJail(
        top,
        entry.value,
        "a submodule path in .gitmodules",
        "read from a file",
      );
      await this.repositoryAt(folder, bases);
    }
  }

  async configFile(file: string, gitDir: string, bases: readonly string[]): Promise<void> {
    const text = await this.readSmall(file, `the configuration file "${file}"`);
    if (text === null) return;
    const parsed = parseGitConfig(text);
    if (!parsed.ok) {
      refuse(`the configuration file "${file}" cannot be read as git reads it: ${parsed.why}`);
    }
    if (parsed.entries.length > MAX_CONFIG_ENTRIES) {
      refuse(`the configuration file "${file}" is too large to vet`);
    }
    for (const entry of parsed.entries) {
      if (entry.section === "remote" && entry.subsection !== null) {
        this.remoteNames.add(entry.subsection);
      }
      const why = refusedConfigEntry(entry);
      if (why !== null) refuse(`the repository's configuration (${file}) ${why}`);
      if (entry.section === "core" && entry.name === "worktree") {
        // git reads core.worktree relative to the git folder (a submodule's
        // is `../../../sub`): it must stay in the jail and out of git folders.
        const tree = await this.insideJail(
          gitDir,
          entry.value ?? "",
          "core.worktree",
          "read from a file",
        );
        if (this.isInGitDir(tree)) refuse("core.worktree is inside a git folder");
        this.#worktrees.set(gitDir, [...(this.#worktrees.get(gitDir) ?? []), tree]);
        continue;
      }
      if (entry.value !== null) await this.configValue(file, entry.value, bases);
    }
  }

  /** Any value may be read as a path by some key: it must not lead out from any base git may use. */
  async configValue(file: string, value: string, bases: readonly string[]): Promise<void> {
    if (/^(~|%\(prefix\)|file:)/i.test(value)) {
      refuse(
        `the repository's configuration (${file}) has a value starting with "~", "%(prefix)" or "file:", which names a file outside the jail`,
      );
    }
    if (value.length === 0) return;
    for (const base of bases) {
      await this.insideJail(
        base,
        value,
        `a value in the configuration file "${file}"`,
        "read from a file",
      );
    }
  }

  async alternates(objectsDir: string, depth: number): Promise<void> {
    const text = await this.readSmall(`${objectsDir}/info/alternates`, "the alternates file");
    if (text === null) return;
    if (depth >= MAX_ALTERNATE_DEPTH) refuse("the object alternates nest deeper than git follows");
    for (const line of text.split("\n")) {
      if (line === "" || line.startsWith("#")) continue;
      if (line.startsWith('"')) {
        refuse("an object alternate is quoted, which htmcp does not read");
      }
      const target = await this.insideJail(
        objectsDir,
        line,
        "an object alternate",
        "read from a file",
      );
      await this.alternates(target, depth + 1);
    }
  }

  /** Whether `path` is a git folder or inside one (by name, or by being one we inspected). */
  isInGitDir(path: string): boolean {
    if (path.split("/").some((segment) => segment.toLowerCase() === ".git")) return true;
    return this.gitDirs.some((dir) => path === dir || path.startsWith(`${dir}/`));
  }

  /** What `path` is once symlinks are followed; a link must stay inside the jail. */
  async kind(path: string): Promise<"file" | "directory" | "missing" | "other"> {
    const kind = await this.#reader.kind(path);
    if (kind !== "symlink") return kind;
    const real = await this.insideJail("/", path, "the link");
    const target = await this.#reader.kind(real);
    return target === "symlink" ? "other" : target;
  }

  async isSymlink(path: string): Promise<boolean> {
    return (await this.#reader.kind(path)) === "symlink";
  }

  /** `path` with symlinks followed, required inside the jail. */
  async real(path: string): Promise<string> {
    return await this.insideJail("/", path, "the link");
  }
}

/** The values of git's global options that move git (`-C`) or pick its folders. */
function globalLocations(args: readonly string[]) {
  const { global } = splitGitArgs(args);
  const moves: string[] = [];
  let gitDir: string | null = null;
  let workTree: string | null = null;
  for (let index = 0; index < global.length; index++) {
    const word = global[index] as string;
    const next = global[index + 1];
    if (word === "-C" && next !== undefined) {
      moves.push(next);
      index++;
    } else if (word === "--bare") {
      // git takes the folder it runs in as its git folder (round seventeen).
      gitDir = ".";
    } else if (word === "--git-dir" && next !== undefined) {
      gitDir = next;
      index++;
    } else if (word.startsWith("--git-dir=")) {
      gitDir = word.slice("--git-dir=".length);
    } else if (word === "--work-tree" && next !== undefined) {
      workTree = next;
      index++;
    } else if (word.startsWith("--work-tree=")) {
      workTree = word.slice("--work-tree=".length);
    } else if (
      word === "-c" || word === "--config-env" || word === "--namespace" ||
      word === "--super-prefix" || word === "--attr-source" || word === "--shallow-file"
    ) {
      index++;
    }
  }
  return { moves, gitDir, workTree };
}

/**
 * The words after `worktree add` that may be the new work tree's path: the
 * non-option words, and every word after `--` (round seven added the work
 * tree `-- --x/../.git/wt`, which a filter on "-" let through).
 */
function worktreeAddPaths(args: readonly string[]): string[] {
  const git = splitGitArgs(args);
  if (git.subcommand !== "worktree" || git.rest[0] !== "add") return [];
  const words = git.rest.slice(1);
  const end = words.indexOf("--");
  const before = end === -1 ? words : words.slice(0, end);
  const after = end === -1 ? [] : words.slice(end + 1);
  return [...before.filter((word) => !word.startsWith("-")), ...after];
}

/**
 * The folders `git init --bare` or `--separate-git-dir` (init, clone) would
 * make a git folder of: every word that may name one (over-inclusive: a
 * branch name after `-b` is checked too), or the cwd for a bare `init`
 * naming none.
 */
function newGitFolders(args: readonly string[]): string[] {
  const git = splitGitArgs(args);
  if (git.subcommand !== "init" && git.subcommand !== "clone") return [];
  const folders: string[] = [];
  const words = git.rest;
  for (let index = 0; index < words.length; index++) {
    const word = words[index] as string;
    if (word === "--separate-git-dir" && words[index + 1] !== undefined) {
      folders.push(words[++index] as string);
    } else if (word.startsWith("--separate-git-dir=")) {
      folders.push(word.slice("--separate-git-dir=".length));
    }
  }
  if (git.subcommand === "init" && words.includes("--bare")) {
    const named = words.filter((word) => !word.startsWith("-"));
    folders.push(...(named.length === 0 ? ["."] : named));
  }
  return folders;
}

/** `rebase`, `cherry-pick` or `revert` with `--abort` or `--quit`: they run nothing of the saved state. */
function endsSequence(subcommand: string | null, rest: readonly string[]): boolean {
  if (subcommand !== "rebase" && subcommand !== "cherry-pick" && subcommand !== "revert") {
    return false;
  }
  // Alone: any other word might be an operation that does act on the state.
  return rest.length === 1 && (rest[0] === "--abort" || rest[0] === "--quit");
}

async function inspect(context: GitRepositoryContext, reader: GitRepositoryReader): Promise<void> {
  const { jailRoot } = context;
  const git = splitGitArgs(context.args);
  const inspection = new Inspection(
    reader,
    jailRoot,
    endsSequence(git.subcommand, git.rest),
    context.sandboxed !== true,
    (git.subcommand === "rebase" || git.subcommand === "merge") &&
      git.rest.length === 1 && git.rest[0] === "--quit",
  );
  const locations = globalLocations(context.args);
  // git -C applies each folder in turn, relative to the previous one.
  let cwd = context.cwd;
  for (const move of locations.moves) {
    if (move !== "") cwd = await inspection.insideJail(cwd, move, "the folder of -C");
  }
  const workTree = locations.workTree === null
    ? null
    : await inspection.insideJail(cwd, locations.workTree, "the work tree");

  if (locations.gitDir !== null) {
    let gitDir = await inspection.insideJail(cwd, locations.gitDir, "the git folder");
    if ((await inspection.kind(gitDir)) === "file") {
      // A relative gitfile is read against the folder of the path as given;
      // through a symlink that is not the target's folder: refuse the ambiguity.
      if (await inspection.isSymlink(posix.resolve(cwd, locations.gitDir))) {
        refuse(`the git folder "${locations.gitDir}" is a symlink to a gitfile`);
      }
      gitDir = await inspection.followGitFile(gitDir);
    }
    await inspection.gitDir(gitDir, [cwd, workTree ?? cwd]);
  } else {
    // Every candidate from the cwd up to the jail root, whichever git would pick.
    for (let dir = cwd;; dir = posix.dirname(dir)) {
      const dotGit = `${dir}/.git`;
      const kind = await inspection.kind(dotGit);
      if (kind === "directory") {
        await inspection.gitDir(await inspection.real(dotGit), [cwd, workTree ?? dir]);
      } else if (kind === "file") {
        // git reads a relative gitfile against the folder holding `.git`, a
        // link's target against its own folder: refuse the ambiguity.
        if (await inspection.isSymlink(dotGit)) refuse(`"${dotGit}" is a symlink to a gitfile`);
        const gitDir = await inspection.followGitFile(dotGit);
        await inspection.gitDir(gitDir, [cwd, workTree ?? dir]);
      } else if (kind === "other") refuse(`"${dotGit}" is neither a folder nor a file`);
      // The cwd may itself be a git folder (inside .git, or a bare
      // repository): git needs only HEAD there, its objects, refs and config
      // may come from a common folder (round seventeen: HEAD and commondir).
      if (
        (await inspection.kind(`${dir}/HEAD`)) !== "missing" ||
        (await inspection.kind(`${dir}/commondir`)) !== "missing"
      ) {
        await inspection.gitDir(dir, [cwd, dir]);
      }
      if (dir === jailRoot || !reader.isInsideJail(posix.dirname(dir))) break;
    }
  }

  // A bare word given as the repository is a remote's name only if one is
  // configured; otherwise git reads it as a local path (and clone always
  // does), which is the local transport the other guard refuses.
  const merges = pullRebasingMerges(git.subcommand, git.rest);
  if (merges !== null) {
    refuse(
      `"${merges}" rebases merges, writing merge lines git may run with the octopus strategy, a shell script`,
    );
  }
  const strategy = externalStrategyArgument(git.subcommand, git.rest);
  if (strategy !== null) {
    refuse(
      `the merge strategy "${strategy}" is not built into git, which would run it as a program (git-merge-${strategy}); built in: ort, recursive, ours, subtree`,
    );
  }
  if (git.subcommand !== null) {
    for (const address of explicitGitAddresses(git.subcommand, git.rest)) {
      if (isNetworkGitUrl(address) || isLocalGitAddress(address)) continue;
      if (git.subcommand === "clone" || !inspection.remoteNames.has(address)) {
        refuse(
          `"${address}" names no configured remote, so git would reach it as a local path, where the other repository's hooks run`,
        );
      }
    }
  }

  // Without the kernel sandbox, files written into a git folder by other
  // commands are refused (`src/plan/git_folder_paths.ts`); a folder that is
  // not one yet is not protected, so git must not make one of a folder
  // already holding files: they would become git's state (MERGE_RR, ...).
  if (context.sandboxed !== true) {
    for (const text of newGitFolders(context.args)) {
      const folder = await inspection.insideJail(cwd, text, "the new git folder");
      inspection.namedGitFolder(folder, `the new git folder "${text}"`);
      if ((await inspection.kind(folder)) !== "directory") continue;
      if ((await inspection.kind(`${folder}/HEAD`)) !== "missing") continue;
      const names = await reader.list(folder);
      if (!Array.isArray(names)) refuse(`the folder "${text}" cannot be listed`);
      if ((names as readonly string[]).length > 0) {
        refuse(
          `"${text}" already holds files, which would become the new git folder's own state; without the kernel sandbox git may make a git folder only of a new or empty folder`,
        );
      }
    }
  }

  const targets = [...(workTree === null ? [] : [workTree])];
  for (const path of worktreeAddPaths(context.args)) {
    targets.push(await inspection.insideJail(cwd, path, "the new work tree"));
  }
  for (const target of targets) {
    if (inspection.isInGitDir(target)) {
      refuse(
        `the work tree "${target}" is inside a git folder, where checkout would overwrite its configuration or hooks`,
      );
    }
  }
}

/**
 * Inspects the repository a git command will use.
 *
 * @param context The jail, the confined cwd and git's arguments.
 * @param reader File access (the check step passes one built on `src/jail`).
 * @returns `{ ok: true }`, or a refusal whose reason completes "Cannot run git: ...".
 *
 * @example
 * ```ts
 * import { inspectGitRepository } from "./git_repository.ts";
 * declare const reader: import("./git_repository.ts").GitRepositoryReader;
 * const verdict = await inspectGitRepository(
 *   { jailRoot: "/srv/jail", cwd: "/srv/jail", args: ["status"] },
 *   reader,
 * );
 * if (!verdict.ok) console.log(verdict.reason);
 * ```
 */
export async function inspectGitRepository(
  context: GitRepositoryContext,
  reader: GitRepositoryReader,
): Promise<GitRepositoryVerdict> {
  try {
    await inspect(context, reader);
    return { ok: true };
  } catch (error) {
    if (error instanceof Refusal) return { ok: false, reason: error.message };
    throw error;
  }
}
