/**
 * The policy decision for one command text. Pure apart from the injected
 * `PolicyIo` (consulted only for a path-qualified command word). Deny by
 * default; every step below can only refuse:
 *
 * 1. split the text (shell syntax refused, unbalanced quotes a parse error);
 * 2. resolve the command word (spelling, denylist first, allowlist, same-file
 *    check for paths);
 * 3. the operator's `[[rules]]` (first, so a refusal names the operator's
 *    own rule when both apply);
 * 4. the built-in escape-hatch guards.
 *
 * The text is read once, as the string the caller snapshotted; the argv in
 * the decision is what runs and is never split again.
 *
 * @module
 */

import type { Policy } from "../config/types.ts";
import { basenameOf, resolveCommandWord } from "./command_word.ts";
import { describeGuardHit, findGuardHit } from "./guard_check.ts";
import { gitDiffSafetyArgs, isGit } from "./git_safety.ts";
import { SYSTEM_POLICY_IO } from "./real_path_io.ts";
import { findRuleHit } from "./rules.ts";
import { splitWords, type Word } from "./tokenize.ts";
import type { Decision, PolicyIo } from "./types.ts";

function deny(reason: string, argv: readonly string[]): Decision {
  return { ok: false, code: "POLICY_DENIED", reason, argv };
}

/**
 * Decides whether `raw` may run under `policy`.
 *
 * @param raw The command text, already snapshotted by the caller.
 * @param policy The loaded, frozen policy.
 * @param io Resolves a path-qualified command word; defaults to `Deno.realPathSync`.
 * @returns On success, the argv to run (for git, with `--no-ext-diff` /
 *   `--no-textconv` inserted after diff-family subcommands unless the
 *   `git-diff-drivers` guard is disabled) and the allowlisted command;
 *   otherwise `POLICY_DENIED` or `PARSE_ERROR` with a sentence.
 * @throws {TypeError} When `raw` is not a string.
 *
 * @example
 * ```ts
 * import { evaluateCommand } from "./evaluate.ts";
 * declare const policy: import("../config/types.ts").Policy;
 * const decision = evaluateCommand("ls -la", policy);
 * if (decision.ok) console.log(decision.command.path, decision.argv.slice(1));
 * ```
 */
export function evaluateCommand(
  raw: string,
  policy: Policy,
  io: PolicyIo = SYSTEM_POLICY_IO,
): Decision {
  const split = splitWords(raw);
  if (!split.ok) return { ok: false, code: split.code, reason: split.reason, argv: null };
  return evaluateWords(split.words, policy, io);
}

/**
 * Decides whether one command, already split into words (a plan's stage),
 * may run under `policy`: the same checks as `evaluateCommand` after its
 * split, so a stage of a pipeline is judged exactly as a single command.
 *
 * @param words The command's words, command word first, with their quoting.
 * @param policy The loaded, frozen policy.
 * @param io Resolves a path-qualified command word.
 * @returns The verdict, as for `evaluateCommand`.
 * @throws {RangeError} When `words` is empty (a caller bug).
 */
export function evaluateWords(
  words: readonly Word[],
  policy: Policy,
  io: PolicyIo = SYSTEM_POLICY_IO,
): Decision {
  const argv = Object.freeze(words.map((word) => word.text));
  const [first] = words;
  if (first === undefined) throw new RangeError("evaluateWords() needs at least one word.");

  const resolved = resolveCommandWord(first, policy, io);
  if (!resolved.ok) return deny(resolved.reason, argv);
  const command = resolved.command;
  const args = argv.slice(1);
  const names = [...new Set([command.name, basenameOf(command.realPath)])];

  const ruleHit = findRuleHit(command.name, args, policy.rules);
  if (ruleHit !== null) {
    return deny(
      `Cannot run "${first.text}": its arguments match the policy rule "${ruleHit.entry}" (${ruleHit.rule.reason}).`,
      argv,
    );
  }

  const guardHit = findGuardHit(names, args, policy.disabledGuards);
  if (guardHit !== null) return deny(describeGuardHit(first.text, guardHit), argv);

  const runArgs = isGit(command) && !policy.disabledGuards.has("git-diff-drivers")
    ? gitDiffSafetyArgs(args)
    : args;
  return {
    ok: true,
    argv: Object.freeze([first.text, ...runArgs]),
    command,
    reason:
      `Allowed: "${command.name}" is on the allowlist and no guard or rule refuses its arguments.`,
  };
}
