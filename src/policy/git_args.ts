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
]);

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
