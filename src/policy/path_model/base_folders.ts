/**
 * Flags that change the folder a tool resolves its other paths from. A path
 * checked against the cwd is not the path the tool opens once it has run
 * `chdir(DIR)`: `tar -C .. -cf t.tar ../outside/secret` reads the secret
 * although each argument alone is inside. So every folder change is found
 * here, and the jail checks every path against the cwd and against every
 * folder the tool may be in.
 *
 * Clusters are read as GNU getopt reads them (below); and every path is
 * checked from every folder the tool is ever in, so a path between two
 * folder changes is covered whichever one applies to it.
 *
 * A tool htmcp has no model for is refused when an argument is spelled like
 * a common folder change (`-C`, `--directory`, `--chdir`, `--cwd`,
 * `--work-tree`, `--git-dir`, `--target-directory`, `--root`, `--basedir`):
 * the check cannot know which folder the tool's other paths start from.
 *
 * @module
 */

import { anyPrefixLong, type LongOption, matchesLong, shortCluster } from "../flags.ts";

/** One folder change: its value, and the argv word it came from. */
export interface FolderChange {
  readonly text: string;
  /** Index in argv of the word holding the value. */
  readonly word: number;
  /** True when the value is part of a longer word (`-CDIR`, `--directory=DIR`). */
  readonly attached: boolean;
  /**
   * `chdir`: later folder changes start from here (`tar -C a -C b` is
   * `a/b`). `folder`: a folder the tool resolves some paths from without
   * moving (git's `--git-dir`, `--work-tree`).
   */
  readonly kind: "chdir" | "folder";
}

/** Folder changes in command-line order, or the flag that cannot be modelled. */
export type BaseFolders =
  | { readonly ok: true; readonly folders: readonly FolderChange[] }
  | { readonly ok: false; readonly flag: string };

interface BaseSpec {
  /** The letter that changes the folder, in a `-` cluster (value attached or the next word). */
  readonly short: string;
  /** Letters that take a value, attached or the next word (`short` among them). */
  readonly valueLetters: string;
  /** Letters whose optional value can only be attached (`make -j4`). */
  readonly optionalLetters: string;
  readonly long: readonly LongOption[];
  /** Reads a dash-less first argument as a cluster (tar's old style). */
  readonly oldStyleFirst: boolean;
}

/** tar's letters that take a value. */
const TAR_VALUE_LETTERS = "bCfFgHIKLNTVX";
const TAR: BaseSpec = {
  short: "C",
  valueLetters: TAR_VALUE_LETTERS,
  optionalLetters: "",
  long: [anyPrefixLong("directory")],
  oldStyleFirst: true,
};
const MAKE: BaseSpec = {
  short: "C",
  valueLetters: "CfIoWE",
  optionalLetters: "jlO",
  long: [anyPrefixLong("directory")],
  oldStyleFirst: false,
};

const SPECS: ReadonlyMap<string, BaseSpec> = new Map([
  ["tar", TAR],
  ["gtar", TAR],
  ["bsdtar", TAR],
  ["make", MAKE],
  ["gmake", MAKE],
  ["patch", {
    short: "d",
    valueLetters: "BDdFgiopVrYz",
    optionalLetters: "",
    long: [anyPrefixLong("directory")],
    oldStyleFirst: false,
  }],
]);

/**
 * Tools whose whole option grammar htmcp knows to hold no folder change
 * (beyond those modelled above and `cp`/`mv` in `copy_operands.ts`), so
 * the generic spellings mean something else there (`ls --directory`,
 * `grep -C 3`, `sort -C`).
 */
const NO_BASE_FLAGS: ReadonlySet<string> = new Set([
  "ls",
  "cat",
  "head",
  "tail",
  "wc",
  "stat",
  "du",
  "realpath",
  "readlink",
  "basename",
  "dirname",
  "find",
  "grep",
  "egrep",
  "fgrep",
  "sort",
  "uniq",
  "cut",
  "tr",
  "nl",
  "diff",
  "cmp",
  "comm",
  "sha256sum",
  "sha1sum",
  "sha512sum",
  "md5sum",
  "b2sum",
  "cksum",
  "echo",
  "printf",
  "pwd",
  "date",
  "true",
  "false",
  "sleep",
  "seq",
  "mkdir",
  "touch",
  "cp",
  "mv",
  "sed",
  "awk",
  "gawk",
  "mawk",
  "diff3",
  "sdiff",
  "file",
  "tee",
  "head",
  "od",
  "xxd",
  "hexdump",
  "paste",
  "join",
  "fold",
  "fmt",
  "expand",
  "unexpand",
  "rev",
  "tac",
  "column",
  "env",
  "id",
  "whoami",
  "uname",
  "hostname",
  "ln",
  "link",
  "rg",
  "gsed",
  "nawk",
  "original-awk",
  "split",
  "man",
  "zip",
  "rsync",
]);

/**
 * Options whose relative folder starts somewhere htmcp does not model
 * (rsync's `--link-dest` and friends are relative to the destination, and
 * `--link-dest` makes hard links), refused like an unknown folder change.
 */
const UNMODELLED_FOLDER_OPTIONS: ReadonlyMap<string, readonly LongOption[]> = new Map([
  [
    "rsync",
    ["compare-dest", "copy-dest", "link-dest", "backup-dir", "partial-dir", "temp-dir"].map(
      anyPrefixLong,
    ),
  ],
]);

const GENERIC_LONG: readonly LongOption[] = [
  "directory",
  "chdir",
  "cwd",
  "work-tree",
  "git-dir",
  "target-directory",
  "root",
  "basedir",
  "base-dir",
].map((name) => ({ name, minPrefix: Math.min(3, name.length) }));

/** Whether htmcp knows where `tool` resolves its paths from. */
export function hasPathModel(tool: string): boolean {
  return SPECS.has(tool) || NO_BASE_FLAGS.has(tool) || tool === "git";
}

/** git's global options before the subcommand: the folder changes and the options with a separate value. */
function gitFolders(argv: readonly string[]): FolderChange[] {
  const folders: FolderChange[] = [];
  for (let index = 1; index < argv.length; index++) {
    const word = argv[index] as string;
    if (!word.startsWith("-")) break; // the subcommand: later -C means something else
    if (word === "-C" || word === "--git-dir" || word === "--work-tree") {
      const value = argv[index + 1];
      const kind = word === "-C" ? "chdir" : "folder";
      if (value !== undefined) {
        folders.push({ text: value, word: index + 1, attached: false, kind });
      }
      index++;
      continue;
    }
    for (const prefix of ["--git-dir=", "--work-tree="]) {
      if (word.startsWith(prefix)) {
        folders.push({
          text: word.slice(prefix.length),
          word: index,
          attached: true,
          kind: "folder",
        });
      }
    }
    if (["-c", "--namespace", "--config-env", "--super-prefix", "--list-cmds"].includes(word)) {
      index++;
    }
  }
  return folders;
}

/**
 * Reads folder changes as GNU getopt reads the cluster: the first letter
 * that takes a value takes the rest of the word, or else the next word, and
 * ends the cluster (in `-fC x`, `C` is the archive's name, not a folder
 * change). Old-style `tar cfC a.tar dir` gives the value letters the
 * following words in turn.
 */
function specFolders(argv: readonly string[], spec: BaseSpec): FolderChange[] {
  const folders: FolderChange[] = [];
  const change = (text: string, word: number, attached: boolean) =>
    folders.push({ text, word, attached, kind: "chdir" });
  for (let index = 1; index < argv.length; index++) {
    const word = argv[index] as string;
    if (word === "--") break;
    if (index === 1 && spec.oldStyleFirst && !word.startsWith("-")) {
      let taken = 0;
      for (const letter of word) {
        if (!spec.valueLetters.includes(letter)) continue;
        taken++;
        const value = argv[index + taken];
        if (letter === spec.short && value !== undefined) change(value, index + taken, false);
      }
      index += taken;
      continue;
    }
    if (spec.long.some((option) => matchesLong(word, option))) {
      const equals = word.indexOf("=");
      if (equals !== -1) change(word.slice(equals + 1), index, true);
      else if (argv[index + 1] !== undefined) {
        change(argv[index + 1] as string, index + 1, false);
        index++;
      }
      continue;
    }
    const cluster = shortCluster(word);
    if (cluster === null) continue;
    for (let at = 0; at < cluster.length; at++) {
      const letter = cluster[at] as string;
      if (spec.optionalLetters.includes(letter)) break;
      if (!spec.valueLetters.includes(letter)) continue;
      const attached = cluster.slice(at + 1);
      const value = attached !== "" ? attached : argv[index + 1];
      if (letter === spec.short && value !== undefined) {
        change(value, attached !== "" ? index : index + 1, attached !== "");
      }
      if (attached === "") index++;
      break;
    }
  }
  return folders;
}

function genericFlag(argv: readonly string[]): string | null {
  for (const word of argv.slice(1)) {
    if (word === "--") return null;
    for (const option of GENERIC_LONG) {
      if (matchesLong(word, option)) return `--${option.name}`;
    }
    const cluster = shortCluster(word);
    if (cluster !== null && /^[A-Za-z]*C/.test(cluster)) return "-C";
  }
  return null;
}

/**
 * The folder changes of `argv` for `tool`.
 *
 * @param argv The whole argv.
 * @param tool The command's name (or the real file's name).
 * @returns The folder values in order, or the flag of an unmodelled tool
 *   that may change the folder.
 */
export function baseFolders(argv: readonly string[], tool: string): BaseFolders {
  if (tool === "git") return { ok: true, folders: gitFolders(argv) };
  const spec = SPECS.get(tool);
  if (spec !== undefined) return { ok: true, folders: specFolders(argv, spec) };
  for (const option of UNMODELLED_FOLDER_OPTIONS.get(tool) ?? []) {
    const word = argv.find((arg) => matchesLong(arg, option));
    if (word !== undefined) return { ok: false, flag: `--${option.name}` };
  }
  if (NO_BASE_FLAGS.has(tool)) return { ok: true, folders: [] };
  const flag = genericFlag(argv);
  return flag === null ? { ok: true, folders: [] } : { ok: false, flag };
}
