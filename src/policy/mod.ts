/**
 * The policy engine: tokenizer, metacharacter refusal, allow/deny lists,
 * escape-hatch guards, argument rules, path-argument candidates, interpreter
 * warnings and per-command hardening. Pure: the only filesystem question,
 * "is this path-qualified command the allowlisted file?", goes through an
 * injectable `PolicyIo`. Every refusal is a value, and the default is deny.
 *
 * @module
 */

export type {
  Decision,
  PlanWord,
  PolicyIo,
  PolicyRefusalCode,
  PromptHit,
  RunSpec,
  TokenizeResult,
} from "./types.ts";
export { tokenize } from "./tokenize.ts";
export { lexPlan, type LexResult, type Operator, type Token } from "./lex.ts";
export { evaluateArgv, evaluateCommand, evaluateWords, WARN_RULE_PHRASE } from "./evaluate.ts";
export type { Word } from "./tokenize.ts";
export { SYSTEM_POLICY_IO } from "./real_path_io.ts";
export { type CandidateResult, looksLikePath, pathArgumentCandidates } from "./path_candidates.ts";
export { interpreterWarnings, isInterpreter } from "./interpreters.ts";
export { type FlagScope, type Guard, GUARD_NAMES, type GuardMatch, GUARDS } from "./guards.ts";
export type { FlagSet, LongOption } from "./flags.ts";
export { activeGuardSummaries, type GuardSummary } from "./guard_summaries.ts";
export {
  type CommandHardening,
  commandHardening,
  gitDiffSafetyArgs,
  gitSafetyArgs,
  gitSafetyEnv,
} from "./git_safety.ts";
export { gitMayWriteWorkTree } from "./git_args.ts";
export { findPromptHit, findRuleHit, type RuleHit, ruleWordMatches } from "./rules.ts";
export { type PathPlan, planPathChecks, type PlanResult } from "./path_model/mod.ts";
export { describeRepositoryRefusal, isGitCommand, needsGitRepositoryCheck } from "./guard_check.ts";
export {
  type GitFolderEntry,
  type GitPathResolution,
  type GitRepositoryContext,
  type GitRepositoryReader,
  type GitRepositoryVerdict,
  inspectGitRepository,
} from "./git_repository.ts";
