/**
 * A judged plan in the two forms that follow the verdict: what the executor
 * runs (`CommandPlan`) and what the audit attempt records (every stage's
 * argv and redirections). Both are made from the same `CheckedPlan`, so the
 * record is exactly what runs. Pure.
 *
 * @module
 */
import type { AuditPlanStage } from "../audit/mod.ts";
import type { CommandPlan, PlanStage, Redirect, StageStatus } from "../exec/mod.ts";
import type { StageResult } from "../result/codes.ts";
import type { CheckedPlan, CheckedRedirection } from "../plan/mod.ts";

function redirect(r: CheckedRedirection): Redirect {
  if (r.kind === "dup") return { kind: r.fd === 2 ? "2>&1" : "1>&2" };
  if (r.kind === "read") return { kind: "<", path: r.path };
  const kind = r.fd === 1 ? (r.append ? ">>" : ">") : (r.append ? "2>>" : "2>");
  return { kind, path: r.path };
}

function redirectText(r: Redirect): string {
  return "path" in r ? `${r.kind} ${r.path}` : r.kind;
}

/**
 * The executor's plan. Every `cd` was resolved while judging (it may only
 * lead the text), so all pipelines run in the plan's final folder and no
 * `cd` step is needed at run time.
 */
export function toCommandPlan(plan: CheckedPlan): CommandPlan {
  return {
    cwd: plan.cwd,
    steps: plan.pipelines.map((pipeline, index) => {
      const stages: PlanStage[] = pipeline.stages.map((stage) => ({
        path: stage.run.path,
        args: stage.run.args,
        redirects: stage.redirections.map(redirect),
      }));
      const step = { kind: "pipeline" as const, stages };
      return index === 0 || pipeline.connector === null
        ? { step }
        : { connector: pipeline.connector, step };
    }),
  };
}

/**
 * Every stage of `plan` with its status from the executor (which reports
 * none when the plan did not end by itself: timeout, cancellation).
 */
export function stageResults(plan: CheckedPlan, statuses: readonly StageStatus[]): StageResult[] {
  return plan.pipelines.flatMap((pipeline) => pipeline.stages).map((stage, index) => ({
    argv: stage.argv,
    exit_code: statuses[index] ?? null,
  }));
}

/**
 * The environment a plan adds to the policy's child environment: every
 * stage's run-specification variables (git's safety settings), which are
 * harmless to the other stages and needed by their own.
 */
export function planEnvironment(plan: CheckedPlan): Record<string, string> {
  const env: Record<string, string> = {};
  for (const pipeline of plan.pipelines) {
    for (const stage of pipeline.stages) Object.assign(env, stage.run.env);
  }
  return env;
}

/** The audit attempt's `plan`: one entry per stage, with what joins it to the one before. */
export function auditPlan(plan: CheckedPlan): AuditPlanStage[] {
  const out: AuditPlanStage[] = [];
  plan.pipelines.forEach((pipeline, index) => {
    pipeline.stages.forEach((stage, at) => {
      out.push({
        joined: at > 0 ? "|" : index === 0 ? null : pipeline.connector,
        argv: [stage.argv[0] as string, ...stage.run.args],
        redirects: stage.redirections.map((r) => redirectText(redirect(r))),
      });
    });
  });
  return out;
}
