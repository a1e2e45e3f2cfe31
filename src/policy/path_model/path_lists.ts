/**
 * Options that make a tool read the paths it opens from a file. Those
 * paths are not arguments, so no argument check sees them: `tar -cf t.tar
 * -T list` with `/etc/shadow` in `list` archives the host file. Without the
 * kernel sandbox such options are refused; with it, any path in the list
 * resolves inside the sandbox's mounts.
 *
 * (`sort --files0-from` is refused by its guard in `guards.ts`.)
 *
 * Also here, for the same reason: commands that write files whose names
 * no argument shows (`computedOutputNames`: git format-patch, mailsplit
 * and am; split and csplit).
 *
 * @module
 */

import { anyPrefixLong, type FlagSet, matchFlag } from "../flags.ts";
import { splitGitArgs } from "../git_args.ts";

/** A checksum list (`sha256sum -c sums`) names the files it hashes: a yes/no oracle on their content. */
const CHECK: FlagSet = { short: ["c"], long: [anyPrefixLong("check")], exact: [] };

const LISTS: ReadonlyMap<string, FlagSet> = new Map([
  ...["md5sum", "sha1sum", "sha224sum", "sha256sum", "sha384sum", "sha512sum", "b2sum", "cksum"]
    .map((tool) => [tool, CHECK] as const),
  // `git hash-object --stdin-paths` hashes (and with -w stores) each file
  // named on stdin, inside the repository or not. `--stdin` alone (the
  // content itself) stays allowed: only an abbreviation past it matches.
  ["git", { short: [], long: [{ name: "stdin-paths", minPrefix: "stdin-".length }], exact: [] }],
  ["tar", { short: ["T"], long: [anyPrefixLong("files-from")], exact: [] }],
  ["gtar", { short: ["T"], long: [anyPrefixLong("files-from")], exact: [] }],
  ["bsdtar", { short: ["T"], long: [anyPrefixLong("files-from")], exact: [] }],
  ["du", { short: [], long: [anyPrefixLong("files0-from")], exact: [] }],
  ["wc", { short: [], long: [anyPrefixLong("files0-from")], exact: [] }],
  ["rsync", { short: [], long: [anyPrefixLong("files-from")], exact: [] }],
  ["find", { short: [], long: [], exact: ["-files0-from"] }],
  // `zip -@` archives each file named on stdin (red team: a host file, then
  // read back with `unzip -p`); `-i@FILE`/`-x@FILE` are caught by "@" too.
  ["zip", { short: ["@"], long: [anyPrefixLong("names-stdin")], exact: [] }],
  // cpio -o and -p read the names to archive or copy from stdin.
  ["cpio", {
    short: ["o", "p"],
    long: [anyPrefixLong("create"), anyPrefixLong("pass-through")],
    exact: [],
  }],
  // `file -f NAMEFILE` reports on each file the list names.
  ["file", { short: ["f"], long: [anyPrefixLong("files-from")], exact: [] }],
  // xz and zstd read the names to (de)compress from a list file.
  ["xz", { short: [], long: [anyPrefixLong("files"), anyPrefixLong("files0")], exact: [] }],
  ["zstd", { short: [], long: [anyPrefixLong("filelist")], exact: [] }],
  // curl opens files named inside option values no check reads whole (red
  // team): a config file (-K, its `url = file:...`), a form's `name=<file`
  // and `name=@file`, `--data-urlencode name@file`, and an output folder
  // joined to each output name.
  ["curl", {
    short: ["K", "F"],
    long: [
      anyPrefixLong("config"),
      anyPrefixLong("form"),
      anyPrefixLong("data-urlencode"),
      anyPrefixLong("output-dir"),
    ],
    exact: [],
  }],
  // mktemp joins its template to the folder -p/--tmpdir/-t names (red team).
  ["mktemp", { short: ["p", "t"], long: [anyPrefixLong("tmpdir")], exact: [] }],
]);

/**
 * Tools that read more arguments from a file named `@FILE` (binutils'
 * response files): `strings @list` printed a host file the list named.
 */
const RESPONSE_FILES: ReadonlySet<string> = new Set([
  "strings",
  "nm",
  "objdump",
  "readelf",
  "size",
  "ar",
  "ranlib",
  "objcopy",
  "strip",
  "addr2line",
  "c++filt",
  "ld",
  "as",
  "elfedit",
  "gprof",
  "dwp",
]);

/**
 * The binutils tool a name stands for: the installed files are named for
 * their target (`x86_64-linux-gnu-strings`) and linker (`ld.bfd`,
 * `ld.gold`), and the red team allowlisted such a name past the short one.
 */
function binutilsName(tool: string): string {
  // Over-inclusive on purpose: any name ending in `-strings` counts.
  return tool.slice(tool.lastIndexOf("-") + 1).replace(/\.(bfd|gold)$/, "");
}

/**
 * The option of `argv` that reads paths from a file (or, for binutils, an
 * `@FILE` response file), or null.
 *
 * @param argv The whole argv.
 * @param tool The command's name (or the real file's name).
 */
export function pathListOption(argv: readonly string[], tool: string): string | null {
  if (RESPONSE_FILES.has(binutilsName(tool))) {
    const response = argv.slice(1).find((word) => word.startsWith("@"));
    if (response !== undefined) return response;
  }
  const flags = LISTS.get(tool);
  if (flags === undefined) return null;
  for (let index = 1; index < argv.length; index++) {
    const word = argv[index] as string;
    if (word === "--" && tool !== "find") return null;
    // tar's dash-less first argument is a cluster (`tar cTf list t.tar`).
    const cluster = tool.endsWith("tar") && index === 1 && !word.startsWith("-") ? word : null;
    const found = matchFlag(word, flags, cluster);
    if (found !== null) return found;
  }
  return null;
}

/**
 * Why a command writes files whose names no argument shows, or null: `git
 * format-patch` names each patch after its commit's subject, `git mailsplit`
 * numbers its messages, split and csplit add suffixes to a prefix, each
 * opened through whatever link sits at that name. Without the kernel sandbox such a command is
 * refused; `format-patch --stdout` writes nowhere.
 *
 * @param argv The whole argv.
 * @param tool The command's name (or the real file's name).
 */
export function computedOutputNames(argv: readonly string[], tool: string): string | null {
  // split and csplit name each piece by adding a suffix to a prefix (xaa,
  // xx00, ...), opened through whatever link sits at that name (red team:
  // a link moved to `xaa` had split overwrite a host file).
  if (tool === "split" || tool === "csplit") {
    return `"${tool}" names each file it writes by adding a suffix to a prefix, which no argument check can see; without the kernel sandbox htmcp refuses it. Use head, tail or sed -n with a redirection instead.`;
  }
  if (tool !== "git") return null;
  const git = splitGitArgs(argv.slice(1));
  if (git.subcommand === "format-patch") {
    // Options end at "--": a "--stdout" after it is a path.
    const end = git.rest.indexOf("--");
    const options = end === -1 ? git.rest : git.rest.slice(0, end);
    const stdout = options.some((word) => word.startsWith("--std") && "--stdout".startsWith(word));
    if (!stdout) {
      return '"git format-patch" names each file it writes after a commit\'s subject, which no argument check can see; without the kernel sandbox htmcp refuses it. Use --stdout (with a redirection, "> name.patch") instead.';
    }
  }
  if (git.subcommand === "mailsplit") {
    return '"git mailsplit" writes numbered files no argument names; without the kernel sandbox htmcp refuses it.';
  }
  // `git am` opens what a StGit series file lists (`../..` included, the
  // format detected from the file's first line) and every file of a Maildir
  // folder through its links: paths no argument shows (red team, round
  // eight, read host files both ways). Ending an am in progress opens none.
  if (git.subcommand === "am" && !(git.rest.length === 1 && AM_ENDINGS.has(git.rest[0]!))) {
    return '"git am" opens the files a series file or a Maildir folder lists, which no argument check sees; without the kernel sandbox htmcp refuses it (git am --abort, --quit or --skip end one in progress).';
  }
  return null;
}

/** `git am` options that end an am in progress without reading a mailbox. */
const AM_ENDINGS: ReadonlySet<string> = new Set(["--abort", "--quit", "--skip"]);
