/**
 * What in a git command's arguments or in a repository's state would make
 * git start a program the policy never named, beyond the configuration keys
 * (`git_config_rules.ts`) and the option guards (`guards.ts`):
 *
 * - a merge strategy other than git's built-in ones: git runs
 *   `git-merge-<name>` for any other (`resolve` and `octopus` are shell
 *   scripts, so `sh` starts), from `-s`/`--strategy`, `pull.twohead`,
 *   `pull.octopus`, or a rebase's or cherry-pick's saved options
 *   (`rebase-merge/strategy`, `sequencer/opts`);
 * - an `exec` (`x`) line in the todo list of a rebase in progress: `git
 *   rebase --continue` runs it with the shell. The list is a file in the git
 *   folder, so a command that writes files in the jail can plant one; the
 *   `--exec` guard sees only the arguments;
 * - a `merge` line with more than one parent in that list, which the
 *   sequencer runs as `git merge -s octopus` (a shell script); and a rebase
 *   that writes such lines itself (`rebase -r`, `pull --rebase=merges`,
 *   `pull.rebase`/`branch.*.rebase = merges`), whose list git makes and
 *   runs in one go, before any check could read it.
 *
 * One predicate per question, used by every caller. Pure.
 *
 * @module
 */

/** The strategies git runs in its own process (builtin/merge.c, sequencer.c). */
const BUILTIN_STRATEGIES: ReadonlySet<string> = new Set(["ort", "recursive", "ours", "subtree"]);

/**
 * Whether git runs the merge strategy `name` without starting a program.
 *
 * @param name The strategy as given (`-s NAME`, a configuration value, a state file).
 */
export function isBuiltinMergeStrategy(name: string): boolean {
  return BUILTIN_STRATEGIES.has(name.trim());
}

/** The subcommands whose `--strategy` names a merge strategy. */
const STRATEGY_SUBCOMMANDS: ReadonlySet<string> = new Set([
  "merge",
  "pull",
  "rebase",
  "cherry-pick",
  "revert",
]);

/** Those whose `-s` is `--strategy` (for cherry-pick and revert it is `--signoff`). */
const SHORT_STRATEGY_SUBCOMMANDS: ReadonlySet<string> = new Set(["merge", "pull", "rebase"]);

/**
 * Short options of those subcommands that take a value: in a cluster, the
 * letters after one are its value (`-mfast` is the message "fast"). Any
 * other letter is read as a flag, so a value-taking letter missing here
 * makes the check refuse more, never less.
 */
const VALUE_LETTERS: ReadonlySet<string> = new Set(["m", "F", "X", "S", "C", "j", "x", "O", "o"]);

/**
 * The strategy a short-option cluster (`-s NAME`, `-sNAME`, `-nsNAME`)
 * names, and whether its value is the next word; null when it names none.
 */
function clusterStrategy(
  word: string,
  next: string | undefined,
): { readonly value: string; readonly usesNext: boolean } | null {
  for (let at = 1; at < word.length; at++) {
    const letter = word[at] as string;
    if (letter === "s") {
      return at + 1 < word.length
        ? { value: word.slice(at + 1), usesNext: false }
        : { value: next ?? "", usesNext: true };
    }
    if (VALUE_LETTERS.has(letter) || !/[A-Za-z0-9]/.test(letter)) return null;
  }
  return null;
}

/**
 * The first merge strategy in a subcommand's arguments that git would run
 * as a program, or null.
 *
 * @param subcommand git's subcommand (`splitGitArgs`).
 * @param rest The words after it.
 */
export function externalStrategyArgument(
  subcommand: string | null,
  rest: readonly string[],
): string | null {
  if (subcommand === null || !STRATEGY_SUBCOMMANDS.has(subcommand)) return null;
  for (let index = 0; index < rest.length; index++) {
    const word = rest[index] as string;
    if (word === "--") break;
    let value: string | undefined;
    if (word === "--strategy") value = rest[++index] ?? "";
    else if (word.startsWith("--strategy=")) value = word.slice("--strategy=".length);
    else if (SHORT_STRATEGY_SUBCOMMANDS.has(subcommand) && /^-[^-]/.test(word)) {
      const named = clusterStrategy(word, rest[index + 1]);
      if (named !== null) {
        value = named.value;
        if (named.usesNext) index++;
      }
    }
    if (value !== undefined && !isBuiltinMergeStrategy(value)) return value;
  }
  return null;
}

/**
 * The first line of a sequencer todo list (`rebase-merge/git-rebase-todo`,
 * `sequencer/todo`) that runs a shell command, or null. git skips leading
 * blanks and takes `exec` or its abbreviation `x` before a blank.
 *
 * @param todo The list's text.
 */
export function todoExecLine(todo: string): string | null {
  for (const line of todo.split("\n")) {
    const word = line.trimStart().split(/[ \t\r]/, 1)[0]!.toLowerCase();
    if (word === "exec" || word === "x") return line.trim();
  }
  return null;
}

/**
 * The first line of a sequencer todo list that merges more than one parent
 * (`merge -C abc one two`), or null: the sequencer runs it with the octopus
 * strategy, a shell script, whatever the strategy options say.
 *
 * @param todo The list's text.
 */
export function todoOctopusLine(todo: string): string | null {
  for (const line of todo.split("\n")) {
    const words = line.trim().split(/[ \t\r]+/);
    const command = words[0]?.toLowerCase();
    if (command !== "merge" && command !== "m") continue;
    let parents = 0;
    for (let index = 1; index < words.length; index++) {
      const word = words[index] as string;
      if (word.startsWith("#")) break;
      if (word === "-C" || word === "-c") {
        index++;
        continue;
      }
      if (word !== "") parents++;
    }
    if (parents > 1) return line.trim();
  }
  return null;
}

/**
 * Whether a configuration value of `pull.rebase` or `branch.*.rebase` makes
 * git rebase merges (`merges`, or git's older `preserve`), writing merge
 * lines of its own that may merge several parents.
 *
 * @param value The configured value.
 */
export function rebasesMerges(value: string): boolean {
  const word = value.trim().toLowerCase();
  return word === "merges" || word === "m" || word === "preserve" || word === "p";
}

/**
 * The option of a `git pull` that rebases merges (`--rebase=merges`), or null.
 *
 * @param subcommand git's subcommand.
 * @param rest The words after it.
 */
export function pullRebasingMerges(
  subcommand: string | null,
  rest: readonly string[],
): string | null {
  if (subcommand !== "pull") return null;
  for (const word of rest) {
    if (word === "--") break;
    const named = /^--reb(?:a(?:s(?:e)?)?)?=(.*)$/.exec(word);
    if (named !== null && rebasesMerges(named[1] as string)) return word;
    // A short-option cluster carries -r's value too: `-vrmerges` (round nine).
    // Digits too: `-4rmerges` is -4, then -r with "merges" (round ten).
    const cluster = /^-([a-zA-Z0-9]*?)r(.+)$/.exec(word);
    if (cluster !== null && !word.startsWith("--") && rebasesMerges(cluster[2] as string)) {
      return word;
    }
  }
  return null;
}
