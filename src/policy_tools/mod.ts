/**
 * Policy-as-code tooling for operators: the policy's own `[[tests]]` and
 * lint findings. Never reachable from MCP.
 *
 * @module
 */
export { type LintFinding, lintPolicy, type LintSeverity } from "./lint.ts";
export {
  firstFailingPolicyTest,
  type PolicyTestOutcome,
  runPolicyTest,
  runPolicyTests,
} from "./run_tests.ts";
export {
  DIFF_LIMITS,
  type DiffExample,
  type DiffLimits,
  diffPolicies,
  examplesFromAuditLog,
  examplesFromLines,
  examplesFromTests,
  type VerdictChange,
} from "./diff.ts";
export { canonicalPolicyJson, policyHash } from "./identity.ts";
export { suggestFromAuditLog, type Suggestion } from "./suggest.ts";
// The result codes the outcomes carry, so the surface is complete (the
// policy and its tests are config's types).
export type { ResultCode } from "../result/codes.ts";
