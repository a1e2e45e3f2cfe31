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
import { describeGuardHit, findGuardHit, programWordIndexes } from "./guard_check.ts";
import { commandHardening, gitDiffSafetyArgs, isGit } from "./git_safety.ts";
import { SYSTEM_POLICY_IO } from "./real_path_io.ts";
import { EVERY_RUN, findPromptHit, findRuleHit } from "./rules.ts";
import { checkArgSchema } from "./arg_schema.ts";
import { type SplitResult, splitWords, type Word, wordsFromArgv } from "./tokenize.ts";
import type { Decision, PolicyIo } from "./types.ts";

function deny(reason: string, argv: readonly string[]): Decision {
  return { ok: false, code: "POLICY_DENIED", reason, argv };
}

/**
 * The words every `enforce = "warn"` sentence carries, in the reply's
 * `policy_reason` and the audit attempt's `reason`; `htmcp audit show
 * --warned` finds the would-be refusals in a log by them.
 */
export const WARN_RULE_PHRASE = '(enforce = "warn") would have refused this command';

/**
 * Decides whether `raw` may run under `policy`.
 *
 * @param raw The command text, already snapshotted by the caller.
 * @param policy The loaded, frozen policy.
 * @param io Resolves a path-qualified command word; defaults to `Deno.realPathSync`.
 * @returns On success, the typed argv (for git, with `--no-ext-diff` /
 *   `--no-textconv` inserted after diff-family subcommands unless the
 *   `git-diff-drivers` guard is disabled), the allowlisted command and the
 *   complete run specification (`run`: path, every argument including git's
 *   safety options, extra environment); otherwise `POLICY_DENIED` or
 *   `PARSE_ERROR` with a sentence.
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
  return evaluateSplit(splitWords(raw), policy, io);
}

/**
 * Decides whether an already-split `argv` may run under `policy`: the same
 * decision as {@linkcode evaluateCommand} from the word list on, with no
 * tokenizing (each word is taken whole, as data).
 *
 * @param argv The words, command word first (e.g. as the operator's shell split them).
 * @param policy The loaded, frozen policy.
 * @param io Resolves a path-qualified command word; defaults to `Deno.realPathSync`.
 * @returns The same `Decision` as {@linkcode evaluateCommand}.
 * @throws {TypeError} When a word is not a string.
 *
 * @example
 * ```ts
 * import { evaluateArgv } from "./evaluate.ts";
 * declare const policy: import("../config/types.ts").Policy;
 * const decision = evaluateArgv(["grep", "a b", "notes.txt"], policy);
 * // decision.argv: ["grep", "a b", "notes.txt"]
 * ```
 */
export function evaluateArgv(
  argv: readonly string[],
  policy: Policy,
  io: PolicyIo = SYSTEM_POLICY_IO,
): Decision {
  return evaluateSplit(wordsFromArgv(argv), policy, io);
}

/** Everything after the split: the one place a word list is judged. */
function evaluateSplit(split: SplitResult, policy: Policy, io: PolicyIo): Decision {
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

  // The operator's argument schema, next: it names what may be passed, so an
  // unlisted flag or subcommand is refused before any guard is consulted.
  const schema = policy.argSchemas.get(command.name);
  if (schema !== undefined) {
    const refusal = checkArgSchema(first.text, schema, args);
    if (refusal !== null) return deny(refusal, argv);
  }

  const guardHit = findGuardHit(names, args, policy.disabledGuards);
  if (guardHit !== null) return deny(describeGuardHit(first.text, guardHit), argv);

  // Rollout rules are judged last, on a command every refusing check allowed,
  // so a warning always means "this rule alone would have refused it".
  const warnHit = findRuleHit(command.name, args, policy.rules, "warn");
  const ruleWarnings = warnHit === null ? [] : [
    `The policy rule "${warnHit.entry}" ${WARN_RULE_PHRASE} (${warnHit.rule.reason}).`,
  ];

  // Prompt rules are judged after every refusing check, so a command the
  // policy refuses is refused, never offered to a human for approval.
  const promptHit = findPromptHit(command.name, args, policy.rules);
  const prompt = promptHit === null ? null : Object.freeze({
    command: command.name,
    entry: promptHit.entry,
    justification: promptHit.rule.justification ?? promptHit.rule.reason,
  });

  const runArgs = isGit(command) && !policy.disabledGuards.has("git-diff-drivers")
    ? gitDiffSafetyArgs(args)
    : args;
  const programWords = programWordIndexes(names, args);
  // git may start ssh (its ssh:// transport) only where the policy runs ssh itself.
  const hardening = commandHardening(command, policy.jailRoot, policy.allowlist.has("ssh"));
  return {
    ok: true,
    argv: Object.freeze([first.text, ...runArgs]),
    run: Object.freeze({
      path: command.path,
      args: Object.freeze([...hardening.prependArgs, ...runArgs]),
      env: Object.freeze({ ...hardening.env }),
    }),
    pathArgv: Object.freeze([
      first.text,
      ...args.map((word, index) => programWords.has(index) ? "" : word),
    ]),
    command,
    ruleWarnings: Object.freeze(ruleWarnings),
    prompt,
    reason: prompt === null
      ? `Allowed: "${command.name}" is on the allowlist and no guard or rule refuses its arguments.`
      : `Allowed after approval: "${command.name}" is on the allowlist and no guard or rule ` +
        `refuses its arguments, but ${
          prompt.entry === EVERY_RUN
            ? "its allowlist entry holds every run"
            : `the policy rule "${prompt.entry}" holds it`
        } until a human approves it (${prompt.justification}).`,
  };
}
