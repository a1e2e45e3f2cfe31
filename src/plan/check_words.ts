/**
 * The one per-command check: the policy on a command's words, then every
 * path argument confined to the jail. A plain call and every stage of a
 * plan go through it, so a stage of a pipeline is judged exactly as the same
 * command run alone.
 *
 * @module
 */
import type { Policy, ResolvedCommand } from "../config/types.ts";
import { confineArgs } from "../jail/mod.ts";
import { evaluateWords, pathArgumentCandidates, type Word } from "../policy/mod.ts";
import type { ResultCode } from "../result/codes.ts";

/** The verdict on one command's words in a confined cwd. */
export type WordsCheck =
  | {
    readonly ok: true;
    readonly argv: readonly string[];
    readonly command: ResolvedCommand;
    readonly reason: string;
  }
  | {
    readonly ok: false;
    readonly code: ResultCode;
    readonly reason: string;
    readonly argv: readonly string[] | null;
  };

/**
 * Judges one command, already split into words, in the confined real folder
 * `cwd`: the policy (allowlist, denylist, rules, guards) on the words, then
 * every path argument confined to the jail. The one per-command check: a
 * plain call and every stage of a plan go through it.
 *
 * @param policy The loaded policy.
 * @param words The command's words (globs already expanded).
 * @param cwd The confined real working folder.
 */
export async function checkWords(
  policy: Policy,
  words: readonly Word[],
  cwd: string,
): Promise<WordsCheck> {
  const decision = evaluateWords(words, policy);
  if (!decision.ok) {
    return { ok: false, code: decision.code, reason: decision.reason, argv: decision.argv };
  }
  if (policy.confineArgs) {
    const confined = await confineArgs(policy.jailRoot, cwd, pathArgumentCandidates(decision.argv));
    if (!confined.ok) {
      return { ok: false, code: confined.code, reason: confined.reason, argv: decision.argv };
    }
  }
  return { ok: true, argv: decision.argv, command: decision.command, reason: decision.reason };
}
