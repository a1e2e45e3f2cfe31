/**
 * Commands that create links, and commands that read or write through the
 * links inside a folder tree.
 *
 * Creating links is refused: a symlink whose text resolves inside where it
 * is made can be moved (`mv`) to where the same text leads out, and a hard
 * link to a host file (`cp -l` of a path reached through such a symlink)
 * keeps the host file's contents reachable under a name inside the jail.
 * `ln`/`link` are refused here too, in case an operator allowlists them.
 *
 * Tree commands are not refused, but marked: their folder operands (and
 * the cwd, where the tool defaults to it) are walked by the jail, which
 * refuses when any symlink in the tree leads outside. That covers reading
 * through links (`grep -R`, `diff -r`, `cp -rL`, `find -L`, `du -L`,
 * `ls -L`, `tar -h`) and writing through them (`cp -r` into a tree holding
 * a planted link, or copying such a link to a depth where it leads out).
 *
 * `tar -x` cannot be judged from its arguments: the archive decides which
 * names, symlinks and hard links it creates. Without the kernel sandbox it
 * is refused; with it, extraction lands in the jail's mount, which is the
 * only writable place there is. The same holds for `cpio -i` and for
 * `unzip` unless it only lists, tests or prints (the red team extracted a
 * link out of the jail, then a member through it, and `../` members with
 * `unzip -:`).
 *
 * @module
 */

import { anyPrefixLong, type FlagSet, matchFlag } from "../flags.ts";

/** What a command does with links. */
export type LinkEffect =
  /** Refused: the command creates links, or extracts an archive without the sandbox. */
  | { readonly kind: "refuse"; readonly reason: string }
  /** Its trees must hold no link leading out; `defaultsToCwd` when it reads `.` without operands. */
  | { readonly kind: "walk"; readonly flag: string; readonly defaultsToCwd: boolean }
  | { readonly kind: "none" };

function set(short: readonly string[], long: readonly string[], exact: readonly string[] = []) {
  return { short, long: long.map(anyPrefixLong), exact } satisfies FlagSet;
}

/** Flags that make each tool follow symlinks while it walks a tree. */
const FOLLOWING: ReadonlyMap<string, FlagSet> = new Map([
  ["grep", set(["R"], ["dereference-recursive"])],
  ["egrep", set(["R"], ["dereference-recursive"])],
  ["fgrep", set(["R"], ["dereference-recursive"])],
  // GNU diff stats (follows) what it meets while it recurses.
  ["diff", set(["r"], ["recursive"])],
  ["find", set([], [], ["-L", "-follow"])],
  ["du", set(["L"], ["dereference"])],
  ["ls", set(["L"], ["dereference"])],
  ["tar", set(["h"], ["dereference"])],
  ["gtar", set(["h"], ["dereference"])],
  ["bsdtar", set(["h", "L"], ["dereference"])],
  // gzip -r (gunzip, zcat) follows a link to a folder while it recurses,
  // and with -f or -c reads and writes through it (red team); zstd -r too.
  ["gzip", set(["r"], ["recursive"])],
  ["gunzip", set(["r"], ["recursive"])],
  ["zcat", set(["r"], ["recursive"])],
  ["zstd", set(["r"], [])],
  // rg recurses by default; -L follows links.
  ["rg", set(["L"], ["follow"])],
  // zip stores what links point to unless -y; rsync follows with -L/-k.
  ["zip", set(["r", "R"], ["recurse-paths", "recurse-patterns"])],
  [
    "rsync",
    set(["L", "k", "r", "a"], [
      "copy-links",
      "copy-dirlinks",
      "copy-unsafe-links",
      "recursive",
      "archive",
    ]),
  ],
]);

const TAR_EXTRACT = set(["x"], ["extract", "get"]);
const TARS: ReadonlySet<string> = new Set(["tar", "gtar", "bsdtar"]);
const CPIO_EXTRACT = set(["i"], ["extract"]);
/**
 * unzip's options that list, test or print instead of extracting: any other
 * unzip extracts (red team: a member linking out of the jail, then a member
 * written through it; `-:` and `../` member names).
 */
const UNZIP_NO_FILES = "lptvczZ";
/** Tools that walk `.` when given no folder. */
const DEFAULTS_TO_CWD: ReadonlySet<string> = new Set([
  "grep",
  "egrep",
  "fgrep",
  "find",
  "du",
  "ls",
  "rg",
]);

function refusedExtraction(what: string, instead: string): LinkEffect {
  return {
    kind: "refuse",
    reason:
      `"${what}" extracts whatever names and links the archive holds, which no argument check can see; without the kernel sandbox htmcp refuses extraction. Use ${instead} instead.`,
  };
}

/**
 * Whether unzip writes files: unless an option word before its archive
 * lists, tests or prints (or asks for zipinfo mode); an option after the
 * archive is not looked at, so such a command counts as extracting.
 */
function unzipExtracts(argv: readonly string[]): boolean {
  for (const word of argv.slice(1)) {
    if (!word.startsWith("-") || word === "-") break;
    if ([...word.slice(1)].some((letter) => UNZIP_NO_FILES.includes(letter))) return false;
  }
  return true;
}

/** `tar`'s dash-less first argument is a cluster (`tar xf a.tar`). */
function tarCluster(argv: readonly string[]): string | null {
  const first = argv[1];
  return first !== undefined && !first.startsWith("-") ? first : null;
}

function firstMatch(argv: readonly string[], flags: FlagSet, tool: string): string | null {
  for (let index = 1; index < argv.length; index++) {
    const word = argv[index] as string;
    if (word === "--" && tool !== "find") return null;
    const override = TARS.has(tool) && index === 1 ? tarCluster(argv) : null;
    const found = matchFlag(word, flags, override);
    if (found !== null) return found;
  }
  return null;
}

/**
 * How `tool` treats links, for a command `argv`.
 *
 * @param argv The whole argv.
 * @param tool The command's name (or the real file's name).
 * @param copy For `cp`/`mv`: what `readCopyOperands` found.
 * @param sandboxed Whether the kernel sandbox contains the command.
 */
export function linkEffect(
  argv: readonly string[],
  tool: string,
  copy: { readonly linkOption: string | null; readonly recursive: boolean } | null,
  sandboxed: boolean,
): LinkEffect {
  if (tool === "ln" || tool === "link") {
    return {
      kind: "refuse",
      reason:
        `htmcp does not run "${tool}": a link made inside the jail can be moved to where it leads outside.`,
    };
  }
  if (copy !== null && copy.linkOption !== null) {
    return {
      kind: "refuse",
      reason:
        `The option "${copy.linkOption}" makes "${tool}" create links instead of copies, which htmcp refuses: a link made inside the jail can be moved to where it leads outside.`,
    };
  }
  if (TARS.has(tool) && !sandboxed) {
    const extract = firstMatch(argv, TAR_EXTRACT, tool);
    if (extract !== null) {
      return {
        kind: "refuse",
        reason:
          `"tar ${extract}" extracts whatever names and links the archive holds, which no argument check can see; without the kernel sandbox htmcp refuses extraction. List it with "tar -t" instead.`,
      };
    }
  }
  if (tool === "cpio" && !sandboxed) {
    const extract = firstMatch(argv, CPIO_EXTRACT, tool);
    if (extract !== null) return refusedExtraction(`cpio ${extract}`, "cpio -t");
  }
  if (tool === "unzip" && !sandboxed && unzipExtracts(argv)) {
    return refusedExtraction(tool, "unzip -l, unzip -t or unzip -p");
  }
  if (copy !== null && copy.recursive) {
    return { kind: "walk", flag: "a recursive copy", defaultsToCwd: false };
  }
  const following = FOLLOWING.get(tool);
  if (following !== undefined) {
    const flag = firstMatch(argv, following, tool);
    if (flag !== null) {
      return { kind: "walk", flag, defaultsToCwd: DEFAULTS_TO_CWD.has(tool) };
    }
  }
  return { kind: "none" };
}
