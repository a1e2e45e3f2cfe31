/**
 * The checks shared by `run_command` and `explain_command`: parse the text
 * into a plan, then judge it. A plain command (one stage, no redirection, no
 * glob) takes the single-command path: policy on its words, then the
 * realpath-based cwd and argument jail, in that order, so a refused command
 * never causes filesystem lookups of its arguments. A composed command
 * (pipes, sequences, redirections, `cd`, globs) is judged whole by
 * `checkPlan`, every stage by `checkWords` exactly as a single command.
 *
 * @module
 */
import type { Policy, ResolvedCommand } from "../config/types.ts";
import { evaluateWords } from "../policy/mod.ts";
import { confineCwd } from "../jail/mod.ts";
import {
  type CheckedPlan,
  checkPlan,
  checkWords,
  isSimpleCommand,
  parsePlan,
} from "../plan/mod.ts";
import type { ResultCode } from "../result/codes.ts";

export type CheckResult =
  | {
    readonly ok: true;
    /** The argv that runs (a plan: its first stage's, for naming and the audit summary). */
    readonly argv: readonly string[];
    readonly command: ResolvedCommand;
    readonly cwd: string;
    readonly reason: string;
    /** The whole plan when the text composes several commands; null for a plain command. */
    readonly plan: CheckedPlan | null;
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
  const parsed = parsePlan(command);
  if (!parsed.ok) {
    return { ok: false, code: parsed.code, reason: parsed.reason, argv: null, cwd: null };
  }
  if (!isSimpleCommand(parsed.plan)) {
    const checked = await checkPlan(policy, parsed.plan, requestedCwd);
    if (!checked.ok) {
      return { ok: false, code: checked.code, reason: checked.reason, argv: null, cwd: null };
    }
    const first = checked.plan.pipelines[0]?.stages[0];
    if (first === undefined) {
      return {
        ok: false,
        code: "POLICY_DENIED",
        reason: `"cd" alone changes nothing outside a session; add a command ("cd DIR && ls").`,
        argv: null,
        cwd: null,
      };
    }
    return {
      ok: true,
      argv: first.argv,
      command: first.command,
      cwd: checked.plan.pipelines[0]?.cwd ?? checked.plan.cwd,
      reason: describePlan(checked.plan),
      plan: checked.plan,
    };
  }
  const step = parsed.plan.steps[0]?.step;
  if (step === undefined || step.kind !== "pipeline") throw new RangeError("not a simple command");
  const words = (step.pipeline.stages[0]?.words ?? []).map(({ text, quoted }) => ({
    text,
    quoted,
  }));
  const decision = evaluateWords(words, policy);
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
  const checked = await checkWords(policy, words, cwd.value);
  if (!checked.ok) {
    return {
      ok: false,
      code: checked.code,
      reason: checked.reason,
      argv: checked.argv,
      cwd: cwd.value,
    };
  }
  return {
    ok: true,
    argv: checked.argv,
    command: checked.command,
    cwd: cwd.value,
    reason: checked.reason,
    plan: null,
  };
}

/** One sentence for an allowed plan: how many commands, joined how. */
function describePlan(plan: CheckedPlan): string {
  const stages = plan.pipelines.reduce((sum, pipeline) => sum + pipeline.stages.length, 0);
  const names = plan.pipelines.map((pipeline) =>
    pipeline.stages.map((stage) => stage.argv[0] ?? "").join(" | ")
  );
  const text = plan.pipelines.map((pipeline, index) =>
    index === 0 ? names[index] : `${pipeline.connector} ${names[index]}`
  ).join(" ");
  return `Allowed: ${stages} command(s) (${text}), each allowlisted and judged on its own; ` +
    `no guard, rule or jail check refuses any of them.`;
}
