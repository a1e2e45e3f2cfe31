/**
 * Which commands may change what a path leads to, for the plans of mode
 * `none`. Every stage of a plan is checked before any stage runs, against
 * the files as they are then. A stage that renames entries or makes links
 * (`mv d1 d2`, `cp -P`, `tar -x`, `git checkout`, `patch`) can make a later
 * stage's checked path lead somewhere else: `mv d1 d2 && cat d2/r` read
 * through a link `d1/r` that led out, because `d2/r` did not exist when it
 * was checked. Without the kernel sandbox such a plan is refused unless
 * nothing after the changing stage could be affected: the model runs the
 * steps as separate calls, each checked against the files as they are then.
 *
 * The list is of commands known to do no such thing: they read, or write
 * regular files and folders by the names they are given (a new file or
 * folder cannot lead anywhere a checked path did not); every other command,
 * including any the operator allowlists, counts as one that may. Pure.
 *
 * @module
 */
import type { ResolvedCommand } from "../config/types.ts";
import * as posix from "../path/mod.ts";

// deno-fmt-ignore
const KEEPS_LINKS: ReadonlySet<string> = new Set([
  // reading, listing, comparing
  "cat", "tac", "head", "tail", "wc", "stat", "du", "ls", "file", "realpath", "readlink", "basename",
  "dirname", "pwd", "find", "grep", "egrep", "fgrep", "rg", "diff", "cmp", "comm", "sha1sum",
  "sha256sum", "sha512sum", "md5sum", "b2sum", "cksum", "od", "xxd", "base64", "jq",
  // text filters (write only to stdout, or a regular file: sed -i replaces a file by a regular file)
  "sort", "uniq", "cut", "tr", "nl", "fold", "fmt", "paste", "join", "column", "expand", "unexpand",
  "rev", "shuf", "sed", "awk", "gawk", "mawk",
  // printing and waiting
  "echo", "printf", "date", "true", "false", "sleep", "seq", "yes", "test", "expr",
  // new regular files and folders, by the name given
  "tee", "touch", "mkdir",
]);

/**
 * Whether running `command` may change what an existing or future path
 * leads to (renames, links, unpacking): true for every command not known
 * not to.
 *
 * @param command The stage's allowlisted command: its name and the binary's real name must both be known.
 */
export function mayChangeWhatPathsLeadTo(command: ResolvedCommand): boolean {
  return !(KEEPS_LINKS.has(posix.basename(command.name)) &&
    KEEPS_LINKS.has(posix.basename(command.realPath)));
}

// deno-fmt-ignore
const WRITES_NOTHING: ReadonlySet<string> = new Set([
  // reading, listing, comparing (find can write and delete: left out)
  "cat", "tac", "head", "tail", "wc", "stat", "du", "ls", "realpath", "readlink", "basename",
  "dirname", "pwd", "grep", "egrep", "fgrep", "rg", "diff", "cmp", "comm", "sha1sum", "sha256sum",
  "sha512sum", "md5sum", "b2sum", "cksum", "od", "base64", "jq",
  // text filters that write to stdout only (uniq's second operand, sed and awk can write,
  // and so can xxd's second operand, shuf -o and file -C: left out; the red team wrote .git/config
  // with the first two)
  "cut", "tr", "nl", "fold", "fmt", "paste", "join", "column", "expand", "unexpand", "rev",
  // sort writes a named file only with -o or a compress program, both refused by guards in every
  // mode (sort-output, sort-compress-program); -T makes randomly named temporaries
  "sort",
  // printing and waiting
  "echo", "printf", "date", "true", "false", "sleep", "seq", "yes", "test", "expr",
]);

/**
 * Whether running `command` may write a file by itself (its redirections
 * aside): true for every command not known to write nothing. Under the
 * kernel sandbox git's stages are checked against the files as they are
 * before the plan runs; a stage that writes before or beside one could
 * plant what git reads (`src/plan/check_plan.ts` says why). Pure.
 *
 * @param command The stage's allowlisted command: its name and the binary's real name must both be known.
 */
export function mayWriteFiles(command: ResolvedCommand): boolean {
  return !(WRITES_NOTHING.has(posix.basename(command.name)) &&
    WRITES_NOTHING.has(posix.basename(command.realPath)));
}
