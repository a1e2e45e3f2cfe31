/**
 * The operator's `[[rules]] deny_args`: each entry is a set of words, and a
 * command is refused when every word of one entry appears among its
 * arguments, in any order (`"push --force"` refuses `git --force push`).
 *
 * How one rule word matches one argument:
 *
 * - `--name` matches `--name`, `--name=value` and any abbreviation of it
 *   (`--forc`), as GNU getopt and git accept; a rule word with `=` in it
 *   (`--format=x`) matches only exactly.
 * - `-x` (one letter) matches any single-dash argument containing `x`:
 *   `-x`, clusters (`-fx`, `-xf`) and attached values (`-xVALUE`). This
 *   over-refuses when the letter is inside another option's attached value
 *   (`-mfix` for `-f`); write that value as its own word instead.
 * - `-word` (several letters after one dash, find-style) and any other word
 *   (`push`) match only exactly. Write short flags one per word
 *   (`"-r -f"`, not `"-rf"`) so every spelling of them is covered.
 *
 * Matching is case-sensitive and also looks past `--`.
 *
 * @module
 */

import type { ArgRule } from "../config/types.ts";
import { anyPrefixLong, matchesLong, shortCluster } from "./flags.ts";

/**
 * Whether one rule word matches one argument, by the spelling rules above.
 *
 * @param ruleWord One word of a `deny_args` entry.
 * @param argument One argument of the command.
 * @returns True when `argument` is a spelling of `ruleWord`.
 *
 * @example
 * ```ts
 * import { ruleWordMatches } from "./rules.ts";
 * ruleWordMatches("--force", "--forc"); // true: an abbreviation git accepts
 * ruleWordMatches("-f", "-xfz"); // true: the letter inside a cluster
 * ruleWordMatches("push", "pushd"); // false: other words match only exactly
 * ```
 */
export function ruleWordMatches(ruleWord: string, argument: string): boolean {
  if (ruleWord.startsWith("--") && ruleWord.length > 2 && !ruleWord.includes("=")) {
    return matchesLong(argument, anyPrefixLong(ruleWord.slice(2)));
  }
  if (/^-[^-]$/.test(ruleWord)) {
    const cluster = shortCluster(argument);
    return cluster !== null && cluster.includes(ruleWord.slice(1));
  }
  return argument === ruleWord;
}

/** The entry a hit of an allowlist entry's `decision = "prompt"` names. */
export const EVERY_RUN = "(every run)";

/** One rule entry refusing one argv. */
export interface RuleHit {
  /** The operator's rule that matched. */
  readonly rule: ArgRule;
  /** The `deny_args` entry that matched, as the operator wrote it. */
  readonly entry: string;
}

/**
 * Returns the first rule entry of the given enforcement whose words all
 * appear in `args`, or null.
 *
 * @param commandName The allowlisted name of the command.
 * @param args The arguments after the command word.
 * @param rules The policy's rules.
 * @param enforce Which rules to consult: `"deny"` (refusing) or `"warn"` (rollout).
 * @returns The first hit in rule order, or null when no entry matches.
 */
export function findRuleHit(
  commandName: string,
  args: readonly string[],
  rules: readonly ArgRule[],
  enforce: ArgRule["enforce"] = "deny",
): RuleHit | null {
  return firstHit(
    commandName,
    args,
    rules,
    (rule) => rule.enforce === enforce && rule.decision !== "prompt",
  );
}

/**
 * Returns the first `decision = "prompt"` rule entry whose words all appear
 * in `args` (or that matches every run), or null. Such a hit holds the
 * command for a human instead of refusing it.
 *
 * @param commandName The allowlisted name of the command.
 * @param args The arguments after the command word.
 * @param rules The policy's rules.
 * @returns The first prompt hit in rule order (its entry is `EVERY_RUN` for
 * an `every_run` rule), or null.
 */
export function findPromptHit(
  commandName: string,
  args: readonly string[],
  rules: readonly ArgRule[],
): RuleHit | null {
  return firstHit(commandName, args, rules, (rule) => rule.decision === "prompt");
}

function firstHit(
  commandName: string,
  args: readonly string[],
  rules: readonly ArgRule[],
  applies: (rule: ArgRule) => boolean,
): RuleHit | null {
  for (const rule of rules) {
    if (rule.command !== commandName || !applies(rule)) continue;
    // Only a prompt rule may match every run: a refusing rule that matched
    // everything would be a denylist entry in disguise, so it matches nothing.
    if (rule.everyRun === true) {
      if (rule.decision === "prompt") return { rule, entry: EVERY_RUN };
      continue;
    }
    for (const entry of rule.denyArgs) {
      const words = entry.split(/\s+/).filter((word) => word.length > 0);
      // An entry with no words would refuse everything; the loader rejects it, and
      // here it refuses nothing rather than silently widening the rule.
      if (words.length === 0) continue;
      if (words.every((word) => args.some((argument) => ruleWordMatches(word, argument)))) {
        return { rule, entry };
      }
    }
  }
  return null;
}
