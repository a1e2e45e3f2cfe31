/**
 * Command plans: command text parsed into pipelines, sequences,
 * redirections, a leading `cd` and glob words, without a shell. Pure; every
 * construct a shell would interpret that is not modelled here is refused.
 *
 * @module
 */

export type {
  CommandStage,
  Connector,
  Pipeline,
  Plan,
  PlanParseResult,
  PlanWord,
  Redirection,
  Step,
} from "./types.ts";
export { isSimpleCommand, parsePlan, PLAN_LIMITS, type PlanLimits } from "./parse.ts";
export {
  type CheckedPipeline,
  type CheckedPlan,
  type CheckedRedirection,
  type CheckedStage,
  checkPlan,
  DEV_NULL,
  type PlanCheckResult,
} from "./check_plan.ts";
export { expandGlob, GLOB_LIMITS, type GlobLimits, type GlobResult } from "./expand_glob.ts";
export { checkDecided, checkWords, type WordsCheck } from "./check_words.ts";
// The vocabulary and the policy's types the checks take and return, so the
// surface is complete.
export type { ResolvedCommand } from "../config/types.ts";
export type { ResultCode } from "../result/codes.ts";
export type { Decision, PolicyRefusalCode, PromptHit, RunSpec, Word } from "../policy/mod.ts";
