/**
 * Splits git's argv into global options, the subcommand and its arguments,
 * the way git.c's `handle_options()` does: global options come before the
 * first word that does not start with `-`, and a few of them take the next
 * word as their value.
 *
 * @module
 */

/** Global options whose value is the next word (git.c `handle_options`). */
const GLOBAL_WITH_VALUE = new Set([
  "-C",
  "-c",
  "--git-dir",
  "--work-tree",
  "--namespace",
  "--super-prefix",
  "--config-env",
  "--attr-source",
  "--shallow-file",
]);

/** Global options that take no separate value (git.c `handle_options`, git 2.39-2.47). */
const GLOBAL_FLAGS = new Set([
  "-p",
  "--paginate",
  "-P",
  "--no-pager",
  "--no-replace-objects",
  "--bare",
  "--literal-pathspecs",
  "--no-literal-pathspecs",
  "--glob-pathspecs",
  "--noglob-pathspecs",
  "--icase-pathspecs",
  "--no-optional-locks",
  "--no-lazy-fetch",
  "--no-advice",
  "--html-path",
  "--man-path",
  "--info-path",
  "--exec-path",
  "-v",
  "--version",
  "-h",
  "--help",
]);

/** Global options accepted as `--name=value`. */
const GLOBAL_WITH_ATTACHED_VALUE = [
  "--git-dir=",
  "--work-tree=",
  "--namespace=",
  "--super-prefix=",
  "--config-env=",
  "--exec-path=",
  "--list-cmds=",
  "--attr-source=",
  "--shallow-file=",
];

/**
 * The first global option git.c would not recognise, or null. An unknown
 * one might take a value, which would make us mistake the value for the
 * subcommand, so the guard that checks subcommands refuses it.
 */
export function unknownGlobalOption(args: readonly string[]): string | null {
  for (let index = 0; index < args.length; index++) {
    const word = args[index] as string;
    if (!word.startsWith("-")) return null;
    if (GLOBAL_WITH_VALUE.has(word)) {
      index++;
      continue;
    }
    if (GLOBAL_FLAGS.has(word)) continue;
    if (GLOBAL_WITH_ATTACHED_VALUE.some((prefix) => word.startsWith(prefix))) continue;
    return word;
  }
  return null;
}

/** git's argv, split at the subcommand. */
export interface GitArgs {
  /** Words before the subcommand (global options and their values). */
  readonly global: readonly string[];
  /** The subcommand, or null (`git --version`). */
  readonly subcommand: string | null;
  /** Index of the subcommand in the args, or -1. */
  readonly subcommandIndex: number;
  /** Words after the subcommand. */
  readonly rest: readonly string[];
}

/**
 * Splits git's arguments (argv without the command word).
 *
 * @param args The arguments after `git`.
 */
export function splitGitArgs(args: readonly string[]): GitArgs {
  for (let index = 0; index < args.length; index++) {
    const word = args[index] as string;
    if (GLOBAL_WITH_VALUE.has(word)) {
      index++;
      continue;
    }
    if (word.startsWith("-")) continue;
    return {
      global: args.slice(0, index),
      subcommand: word,
      subcommandIndex: index,
      rest: args.slice(index + 1),
    };
  }
  return { global: args, subcommand: null, subcommandIndex: -1, rest: [] };
}

/**
 * git subcommands that write nothing outside the git folder (its index,
 * objects, refs and logs) or read only: every other one may make or move a
 * repository, or write files in the work tree, which may be another
 * repository's git folder when that one is not named `.git` (round
 * seventeen checked out a nested repository's `config`; round eighteen had
 * `git merge-file` and `git mailinfo` write a filter into `.git/config`,
 * and the next git ran it). A list of what is known not to write, since a
 * list of writers missed two.
 */
const WRITES_GIT_FOLDER_AT_MOST: ReadonlySet<string> = new Set([
  "add",
  "annotate",
  "blame",
  "branch",
  "cat-file",
  "check-attr",
  "check-ignore",
  "check-mailmap",
  "check-ref-format",
  "cherry",
  "column",
  "commit",
  "count-objects",
  "describe",
  "diff",
  "diff-files",
  "diff-index",
  "diff-tree",
  "fetch",
  "for-each-ref",
  "fsck",
  "grep",
  "log",
  "ls-files",
  "ls-remote",
  "ls-tree",
  "merge-base",
  "name-rev",
  "notes",
  "push",
  "reflog",
  "rev-list",
  "rev-parse",
  "shortlog",
  "show",
  "show-branch",
  "show-ref",
  "status",
  "tag",
  "var",
  "verify-commit",
  "verify-pack",
  "verify-tag",
  "version",
  "whatchanged",
  "write-tree",
]);

/**
 * Whether git with `args` may write outside its git folder: make or move a
 * repository, or write files in a work tree, where a later git's
 * repository check did not look. Only the subcommands known to write at
 * most into the git folder (`add`, `commit`, `fetch`, the readers) may not;
 * unknown (no subcommand) counts as may. Pure.
 *
 * @param args The arguments after `git`.
 */
export function gitMayWriteWorkTree(args: readonly string[]): boolean {
  const { subcommand } = splitGitArgs(args);
  return subcommand === null || !WRITES_GIT_FOLDER_AT_MOST.has(subcommand);
}
