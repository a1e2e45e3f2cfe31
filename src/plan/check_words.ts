/**
 * The one per-command check: the policy on a command's words, then its path
 * model (folder changes, joined paths, link refusals, tree walks) against the
 * jail, then, for git, the repository's own files. A plain call and every
 * stage of a plan go through it, so a stage of a pipeline is judged exactly
 * as the same command run alone. Policy first (pure), then the filesystem, so
 * a refused command never causes lookups of its arguments; the lookups share
 * one budget and deadline, so the check cannot itself become the denial of
 * service.
 *
 * @module
 */
import { basename } from "../path/mod.ts";
import type { Policy, ResolvedCommand } from "../config/types.ts";
import { CheckBudget, confinePlan, gitRepositoryReader } from "../jail/mod.ts";
import {
  type Decision,
  describeRepositoryRefusal,
  evaluateWords,
  inspectGitRepository,
  isGitCommand,
  needsGitRepositoryCheck,
  planPathChecks,
  type PromptHit,
  type RunSpec,
  type Word,
} from "../policy/mod.ts";
import type { ResultCode } from "../result/codes.ts";
import { gitFolderRefusal, type NamedPlace, shownInJail } from "./git_folder_paths.ts";

/** The verdict on one command in a confined cwd. */
export type WordsCheck =
  | {
    readonly ok: true;
    /** The words as the policy judged them. */
    readonly argv: readonly string[];
    /** Exactly what runs (and what the audit records): the policy's run specification. */
    readonly run: RunSpec;
    /** The allowlist entry the command word resolved to. */
    readonly command: ResolvedCommand;
    /** The policy's sentence for allowing it. */
    readonly reason: string;
    /** `enforce = "warn"` rules that would have refused it (reply and audit say so). */
    readonly ruleWarnings: readonly string[];
    /** The prompt rule that holds it for a human, or null. */
    readonly prompt: PromptHit | null;
  }
  | {
    readonly ok: false;
    /** The refusal's code (policy or jail). */
    readonly code: ResultCode;
    /** The sentence the caller is shown. */
    readonly reason: string;
    /** The words judged, for the audit; null when the policy refused before splitting. */
    readonly argv: readonly string[] | null;
  };

/**
 * The filesystem half of the check, for a command the policy already allowed.
 *
 * @param policy The loaded policy.
 * @param decision The policy's allowing decision.
 * @param cwd The confined real working folder.
 * @param budget The call's lookup budget (shared by every stage of a plan).
 * @returns The run specification with its path arguments confined, or the jail's refusal.
 */
export async function checkDecided(
  policy: Policy,
  decision: Extract<Decision, { ok: true }>,
  cwd: string,
  budget: CheckBudget = new CheckBudget(),
): Promise<WordsCheck> {
  const argv = decision.argv;
  const isGit = isGitCommand(decision.command);
  // `[paths] confine_args = false` is the operator's opt-out of the whole
  // path model (folder changes, link refusals, tree walks), not only of the
  // per-argument check: they are one claim, "paths stay in the jail".
  if (policy.confineArgs) {
    const planned = planPathChecks(
      // pathArgv, not argv: sed scripts and awk programs are not paths.
      decision.pathArgv,
      [decision.command.name, basename(decision.command.realPath)],
      // Only the kernel sandbox contains what no argument shows (tar -x).
      policy.sandbox.mode !== "none",
    );
    if (!planned.ok) return { ok: false, code: planned.code, reason: planned.reason, argv };
    const confined = await confinePlan(policy.jailRoot, cwd, planned.plan, budget);
    if (!confined.ok) return { ok: false, code: confined.code, reason: confined.reason, argv };
    if (policy.sandbox.mode === "none") {
      const { folders, paths } = confined.value;
      const places: NamedPlace[] = [
        ...folders.map(({ path, entered }, index) => ({
          path,
          what: index === 0 ? "The working folder" : "A folder the command changes to",
          named: !entered,
        })),
        // Every candidate, option-looking words included: git takes a word
        // starting with "-" as a path too (an option's value, a word after
        // `--`), which round seven used to write into .git. (So
        // `--git-dir=r/.git` as one word is refused; `--git-dir r/.git` runs.)
        ...paths.map(({ path }) => ({
          path,
          what: `The path "${shownInJail(policy.jailRoot, path)}"`,
          named: true,
        })),
      ];
      const refused = await gitFolderRefusal(policy.jailRoot, places, isGit, budget);
      if (refused !== null) return { ok: false, code: "POLICY_DENIED", reason: refused, argv };
    }
  }
  // A repository in the jail is untrusted input: its files are read (never
  // run) and judged by the policy before git may use them.
  if (needsGitRepositoryCheck(decision.command, policy.disabledGuards)) {
    const repository = await inspectGitRepository(
      {
        jailRoot: policy.jailRoot,
        cwd,
        args: decision.pathArgv.slice(1),
        sandboxed: policy.sandbox.mode !== "none",
      },
      gitRepositoryReader(policy.jailRoot, budget),
    );
    if (!repository.ok) {
      return {
        ok: false,
        code: "POLICY_DENIED",
        reason: describeRepositoryRefusal(argv[0] as string, repository.reason),
        argv,
      };
    }
  }
  return {
    ok: true,
    argv,
    run: decision.run,
    command: decision.command,
    reason: decision.ruleWarnings.length === 0
      ? decision.reason
      : `${decision.reason} ${decision.ruleWarnings.join(" ")}`,
    ruleWarnings: decision.ruleWarnings,
    prompt: decision.prompt,
  };
}

/**
 * Judges one command, already split into words (globs already expanded), in
 * the confined real folder `cwd`.
 *
 * @param policy The loaded policy.
 * @param words The command's words.
 * @param cwd The confined real working folder.
 * @param budget The call's lookup budget.
 * @returns The policy's and then the jail's verdict.
 */
export async function checkWords(
  policy: Policy,
  words: readonly Word[],
  cwd: string,
  budget: CheckBudget = new CheckBudget(),
): Promise<WordsCheck> {
  const decision = evaluateWords(words, policy);
  if (!decision.ok) {
    return { ok: false, code: decision.code, reason: decision.reason, argv: decision.argv };
  }
  return await checkDecided(policy, decision, cwd, budget);
}
