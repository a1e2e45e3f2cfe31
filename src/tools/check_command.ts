/**
 * The checks shared by `run_command` and `explain_command`: parse, policy,
 * cwd jail, argument-path jail. Pure policy first, then the realpath-based
 * jail, in that order, so a refused command never causes filesystem lookups
 * of its arguments.
 *
 * @module
 */
import type { Policy, ResolvedCommand } from "../config/types.ts";
import {
  describeRepositoryRefusal,
  evaluateCommand,
  inspectGitRepository,
  needsGitRepositoryCheck,
  pathArgumentCandidates,
} from "../policy/mod.ts";
import { confineArgs, confineCwd } from "../jail/mod.ts";
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
 * @param command The command text, already snapshotted.
 * @param requestedCwd The cwd the caller asked for (undefined = jail root).
 */
export async function checkCommand(
  policy: Policy,
  command: string,
  requestedCwd: string | undefined,
): Promise<CheckResult> {
  const decision = evaluateCommand(command, policy);
  if (!decision.ok) {
    return {
      ok: false,
      code: decision.code,
      reason: decision.reason,
      argv: decision.argv,
      cwd: null,
    };
  }
  const cwd = await confineCwd(policy.jailRoot, requestedCwd);
  if (!cwd.ok) {
    return { ok: false, code: cwd.code, reason: cwd.reason, argv: decision.argv, cwd: null };
  }
  if (policy.confineArgs) {
    const confined = await confineArgs(
      policy.jailRoot,
      cwd.value,
      // pathArgv, not argv: sed scripts and awk programs are not paths.
      pathArgumentCandidates(decision.pathArgv),
    );
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
    reason: decision.reason,
  };
}
