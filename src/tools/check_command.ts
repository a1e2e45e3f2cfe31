/**
 * The checks shared by `run_command` and `explain_command`: parse, policy,
 * path model, cwd jail, argument-path jail. Pure policy first (the command
 * and its path model are judged from the text), then the realpath-based
 * jail, in that order, so a refused command never causes filesystem lookups
 * of its arguments. The jail's lookups share one budget and deadline, so the
 * check cannot itself become the denial of service.
 *
 * @module
 */
import { basename } from "node:path";
import type { Policy, ResolvedCommand } from "../config/types.ts";
import {
  type Decision,
  describeRepositoryRefusal,
  evaluateArgv,
  evaluateCommand,
  inspectGitRepository,
  needsGitRepositoryCheck,
  planPathChecks,
} from "../policy/mod.ts";
import { CheckBudget, confineCwd, confinePlan } from "../jail/mod.ts";
import { gitRepositoryReader } from "./_git_repository_io.ts";
import type { ResultCode } from "../result/codes.ts";
import type { RunSpec } from "../policy/mod.ts";

export type CheckResult =
  | {
    readonly ok: true;
    readonly argv: readonly string[];
    /** Exactly what runs (and what the audit records): the policy's run specification. */
    readonly run: RunSpec;
    readonly command: ResolvedCommand;
    readonly cwd: string;
    readonly reason: string;
    /** `enforce = "warn"` rules that would have refused it (reply and audit say so). */
    readonly ruleWarnings: readonly string[];
  }
  | {
    readonly ok: false;
    readonly code: ResultCode;
    readonly reason: string;
    readonly argv: readonly string[] | null;
    readonly cwd: string | null;
  };

/**
 * Decides whether `command` may run in `requestedCwd` under `policy`.
 *
 * @param policy The loaded policy.
 * @param command The command text, already snapshotted, or an argv that was
 *   already split (by the operator's shell: taken word for word, never re-split).
 * @param requestedCwd The cwd the caller asked for (undefined = jail root).
 */
export async function checkCommand(
  policy: Policy,
  command: string | readonly string[],
  requestedCwd: string | undefined,
): Promise<CheckResult> {
  const decision = typeof command === "string"
    ? evaluateCommand(command, policy)
    : evaluateArgv(command, policy);
  return await checkDecision(policy, decision, requestedCwd);
}

/** The jail checks after a policy decision; shared by both forms of the command. */
async function checkDecision(
  policy: Policy,
  decision: Decision,
  requestedCwd: string | undefined,
): Promise<CheckResult> {
  if (!decision.ok) {
    return {
      ok: false,
      code: decision.code,
      reason: decision.reason,
      argv: decision.argv,
      cwd: null,
    };
  }
  // `[paths] confine_args = false` is the operator's opt-out of the whole
  // path model (folder changes, link refusals, tree walks), not only of the
  // per-argument check: they are one claim, "paths stay in the jail".
  const planned = policy.confineArgs
    ? planPathChecks(
      // pathArgv, not argv: sed scripts and awk programs are not paths.
      decision.pathArgv,
      [decision.command.name, basename(decision.command.realPath)],
      // Only the kernel sandbox contains what no argument shows (tar -x).
      policy.sandbox.mode !== "none",
    )
    : null;
  if (planned !== null && !planned.ok) {
    return {
      ok: false,
      code: planned.code,
      reason: planned.reason,
      argv: decision.argv,
      cwd: null,
    };
  }
  const budget = new CheckBudget();
  const cwd = await confineCwd(policy.jailRoot, requestedCwd);
  if (!cwd.ok) {
    return { ok: false, code: cwd.code, reason: cwd.reason, argv: decision.argv, cwd: null };
  }
  if (planned !== null) {
    const confined = await confinePlan(policy.jailRoot, cwd.value, planned.plan, budget);
    if (!confined.ok) {
      return {
        ok: false,
        code: confined.code,
        reason: confined.reason,
        argv: decision.argv,
        cwd: cwd.value,
      };
    }
  }
  // A repository in the jail is untrusted input: its files are read (never
  // run) and judged by the policy before git may use them.
  if (needsGitRepositoryCheck(decision.command, policy.disabledGuards)) {
    const repository = await inspectGitRepository(
      { jailRoot: policy.jailRoot, cwd: cwd.value, args: decision.pathArgv.slice(1) },
      gitRepositoryReader(policy.jailRoot),
    );
    if (!repository.ok) {
      return {
        ok: false,
        code: "POLICY_DENIED",
        reason: describeRepositoryRefusal(decision.argv[0] as string, repository.reason),
        argv: decision.argv,
        cwd: cwd.value,
      };
    }
  }
  return {
    ok: true,
    argv: decision.argv,
    run: decision.run,
    command: decision.command,
    cwd: cwd.value,
    reason: decision.ruleWarnings.length === 0
      ? decision.reason
      : `${decision.reason} ${decision.ruleWarnings.join(" ")}`,
    ruleWarnings: decision.ruleWarnings,
  };
}
