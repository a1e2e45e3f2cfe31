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
export { lexPlan, type LexResult, type Operator, type Token } from "./lex.ts";
export { isSimpleCommand, parsePlan, PLAN_LIMITS } from "./parse.ts";
