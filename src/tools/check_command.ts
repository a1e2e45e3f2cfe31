/**
 * The checks shared by `run_command` and `explain_command`: parse the text
 * into a plan, then judge it. A plain command (one stage, no redirection, no
 * glob) takes the single-command path: the policy on its words first (pure,
 * so a refused command never causes filesystem lookups), then the cwd and
 * the per-command filesystem checks (`checkDecided`). A composed command
 * (pipes, sequences, redirections, `cd`, globs) is judged whole by
 * `checkPlan`, every stage exactly as a single command. An argv that the
 * operator's shell already split (`htmcp explain -- ...`) is judged word for
 * word, never re-split.
 *
 * @module
 */
import type { Policy } from "../config/types.ts";
import { type Decision, evaluateArgv, evaluateWords } from "../policy/mod.ts";
import {
  CheckBudget,
  confineCwd,
  type FolderLister,
  MAX_PATH_LOOKUPS,
  PATH_CHECK_DEADLINE_MS,
} from "../jail/mod.ts";
import {
  checkDecided,
  type CheckedPlan,
  checkPlan,
  isSimpleCommand,
  parsePlan,
} from "../plan/mod.ts";
import type { CommandInput } from "./snapshot.ts";
import { checkShellText } from "./check_shell_text.ts";
import type { CheckResult } from "./check_result.ts";

export type { CheckResult } from "./check_result.ts";

/**
 * Decides whether `command` may run in `requestedCwd` under `policy`.
 *
 * @param policy The loaded policy.
 * @param command The command text, already snapshotted, or an argv that was
 *   already split (by the operator's shell: taken word for word, never re-split).
 * @param requestedCwd The cwd the caller asked for (undefined = jail root).
 * @param lister How the checks list folders: the executor's (by descriptor,
 *   through its helper) for a model's call; null (in this process) for the
 *   operator's CLI and policy tests, which run no executor.
 */
export async function checkCommand(
  policy: Policy,
  command: string | readonly string[],
  requestedCwd: string | undefined,
  lister: FolderLister | null = null,
): Promise<CheckResult> {
  if (typeof command === "string" && policy.fullControl !== undefined) {
    return await checkShellText(policy, policy.fullControl, command, requestedCwd);
  }
  if (typeof command !== "string") {
    return await checkSingle(policy, evaluateArgv(command, policy), requestedCwd, lister);
  }
  const parsed = parsePlan(command);
  if (!parsed.ok) {
    return { ok: false, code: parsed.code, reason: parsed.reason, argv: null, cwd: null };
  }
  if (isSimpleCommand(parsed.plan)) {
    const step = parsed.plan.steps[0]?.step;
    if (step === undefined || step.kind !== "pipeline") throw new RangeError("not a command");
    const words = (step.pipeline.stages[0]?.words ?? []).map(({ text, quoted }) => ({
      text,
      quoted,
    }));
    return await checkSingle(policy, evaluateWords(words, policy), requestedCwd, lister);
  }
  const checked = await checkPlan(policy, parsed.plan, requestedCwd, lister);
  if (!checked.ok) {
    return { ok: false, code: checked.code, reason: checked.reason, argv: null, cwd: null };
  }
  const firstPipeline = checked.plan.pipelines[0];
  const first = firstPipeline?.stages[0];
  if (firstPipeline === undefined || first === undefined) {
    return {
      ok: false,
      code: "POLICY_DENIED",
      reason: `"cd" alone changes nothing outside a session; add a command ("cd DIR && ls").`,
      argv: null,
      cwd: null,
      cdTarget: checked.plan.cwd,
    };
  }
  return {
    ok: true,
    argv: first.argv,
    run: first.run,
    command: first.command,
    cwd: firstPipeline.cwd,
    reason: describePlan(checked.plan),
    ruleWarnings: checked.plan.pipelines.flatMap((p) => p.stages.flatMap((s) => s.ruleWarnings)),
    prompts: checked.plan.pipelines.flatMap((p) =>
      p.stages.flatMap((s) => s.prompt === null ? [] : [s.prompt])
    ),
    plan: checked.plan,
  };
}

/** One plain command: the policy's decision, then the cwd and the filesystem checks. */
async function checkSingle(
  policy: Policy,
  decision: Decision,
  requestedCwd: string | undefined,
  lister: FolderLister | null,
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
  const cwd = await confineCwd(policy.jailRoot, requestedCwd);
  if (!cwd.ok) {
    return { ok: false, code: cwd.code, reason: cwd.reason, argv: decision.argv, cwd: null };
  }
  const budget = new CheckBudget(PATH_CHECK_DEADLINE_MS, MAX_PATH_LOOKUPS, lister);
  const checked = await checkDecided(policy, decision, cwd.value, budget);
  if (!checked.ok) {
    return {
      ok: false,
      code: checked.code,
      reason: checked.reason,
      argv: checked.argv,
      cwd: cwd.value,
    };
  }
  const { prompt, ...rest } = checked;
  return { ...rest, cwd: cwd.value, prompts: prompt === null ? [] : [prompt], plan: null };
}

/** One sentence for an allowed plan: how many commands, joined how. */
function describePlan(plan: CheckedPlan): string {
  const stages = plan.pipelines.reduce((sum, pipeline) => sum + pipeline.stages.length, 0);
  const text = plan.pipelines.map((pipeline, index) => {
    const names = pipeline.stages.map((stage) => stage.argv[0] ?? "").join(" | ");
    return index === 0 ? names : `${pipeline.connector} ${names}`;
  }).join(" ");
  const warnings = plan.pipelines.flatMap((p) => p.stages.flatMap((s) => s.ruleWarnings));
  return `Allowed: ${stages} command(s) (${text}), each allowlisted and judged on its own; ` +
    `no guard, rule or jail check refuses any of them.` +
    (warnings.length === 0 ? "" : ` ${warnings.join(" ")}`);
}

/**
 * `checkCommand` on a tool's snapshot, plus the one rule that joins its
 * parts: `stdin` feeds one command only. A plan's helper reads the plan
 * itself from its stdin and gives every stage /dev/null, so stdin text for
 * a plan would silently go nowhere; it is refused instead, so the model is
 * never told its input reached a command that never saw it.
 *
 * @param policy The loaded policy.
 * @param input The snapshot of the tool's arguments.
 * @param lister The executor's folder lister (`checkCommand`).
 */
export async function checkCommandInput(
  policy: Policy,
  input: CommandInput,
  lister: FolderLister | null,
): Promise<CheckResult> {
  const checked = await checkCommand(policy, input.command, input.cwd, lister);
  const composed = checked.ok ? checked.plan !== null : checked.cdTarget !== undefined;
  if (composed && input.stdin !== undefined) {
    return {
      ok: false,
      code: "POLICY_DENIED",
      reason: "stdin is accepted for one plain command only, not for a composed command " +
        '(pipes, sequences, redirections, cd, globs); use "cmd < file" for a plan.',
      argv: checked.argv,
      cwd: checked.cwd,
    };
  }
  return checked;
}
