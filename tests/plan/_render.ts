/** A compact, unambiguous rendering of a plan, for table-driven tests. */
import type { Plan, PlanWord, Redirection } from "../../src/plan/mod.ts";

function word(w: PlanWord): string {
  return (w.globAt.length > 0 ? `g${JSON.stringify(w.globAt)}` : "") + JSON.stringify(w.text);
}

function redirection(r: Redirection): string {
  if (r.kind === "dup") return `${r.fd}>&${r.to}`;
  if (r.kind === "read") return `<${word(r.target)}`;
  return `${r.fd}${r.append ? ">>" : ">"}${word(r.target)}`;
}

/** `["grep","x"] | ["sort"] && cd "a"`: words JSON-quoted, globs marked `g[i]`. */
export function renderPlan(plan: Plan): string {
  return plan.steps.map(({ connector, step }) => {
    const body = step.kind === "cd"
      ? `cd ${word(step.dir)}`
      : step.pipeline.stages.map((stage) =>
        [`[${stage.words.map(word).join(",")}]`, ...stage.redirections.map(redirection)].join(" ")
      ).join(" | ");
    return connector === null ? body : `${connector} ${body}`;
  }).join(" ");
}
