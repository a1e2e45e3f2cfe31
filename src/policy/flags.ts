/**
 * How an argument is recognised as a given option, shared by the built-in
 * guards and the operator's `[[rules]]`.
 *
 * The matching deliberately errs towards "yes": a guard that misses a
 * spelling is a bypass, while a guard that refuses an odd but harmless
 * spelling costs a retry. So:
 *
 * - a long option matches `--name`, `--name=value` and every abbreviation
 *   GNU `getopt_long` and git's parse-options accept (`--out` for
 *   `--output`), down to `minPrefix` characters;
 * - a short option matches any single-dash word that contains its letter(s),
 *   anywhere in a cluster (`-uo` and `-oFILE` for `-o`), even where getopt
 *   would read the letter as another option's attached value (`-to`);
 * - an exact word (find's `-exec`) matches only itself.
 *
 * @module
 */

/** A GNU-style long option, named without its dashes. */
export interface LongOption {
  /** The option's full name, without the leading `--` (`output` for `--output`). */
  readonly name: string;
  /**
   * The shortest abbreviation to treat as this option. 1 (any prefix) unless
   * a shorter spelling is itself another, harmless option (tar's
   * `--checkpoint` is not `--checkpoint-action`).
   */
  readonly minPrefix: number;
}

/** The spellings one guard or rule refuses; any one of them is a match. */
export interface FlagSet {
  /** Words that match only when spelled exactly so (find's `-exec`). */
  readonly exact: readonly string[];
  /** GNU long options, matched with their `=value` and their abbreviations. */
  readonly long: readonly LongOption[];
  /** Short option letters, matched anywhere in a single-dash cluster. */
  readonly short: readonly string[];
}

/** A long option that must be spelled out in full before it matches. */
export function fullLong(name: string): LongOption {
  return { name, minPrefix: name.length };
}

/** A long option matched by any abbreviation GNU would accept, and more. */
export function anyPrefixLong(name: string): LongOption {
  return { name, minPrefix: 1 };
}

/** The option name of a `--name[=value]` word, or null for other words. */
export function longOptionName(word: string): string | null {
  if (!word.startsWith("--") || word.length === 2) return null;
  const equals = word.indexOf("=");
  return equals === -1 ? word.slice(2) : word.slice(2, equals);
}

/** The letters of a single-dash cluster (`-xvf` -> `xvf`), or null. */
export function shortCluster(word: string): string | null {
  if (!word.startsWith("-") || word.startsWith("--") || word.length < 2) return null;
  return word.slice(1);
}

/** Whether a `--name` word is `option`, with or without `=value`, or an abbreviation of it. */
export function matchesLong(word: string, option: LongOption): boolean {
  const name = longOptionName(word);
  if (name === null || name.length === 0) return false;
  return name.length >= option.minPrefix && option.name.startsWith(name);
}

/**
 * Returns the spelling in `flags` that `word` matches (for the refusal
 * sentence), or null. `clusterOverride` lets tar's dash-less first argument
 * (`tar xIf ...`) be read as a cluster.
 */
export function matchFlag(
  word: string,
  flags: FlagSet,
  clusterOverride: string | null = null,
): string | null {
  for (const exact of flags.exact) {
    if (word === exact) return exact;
  }
  for (const option of flags.long) {
    if (matchesLong(word, option)) return `--${option.name}`;
  }
  const cluster = clusterOverride ?? shortCluster(word);
  if (cluster !== null) {
    for (const letters of flags.short) {
      if (cluster.includes(letters)) return `-${letters}`;
    }
  }
  return null;
}
