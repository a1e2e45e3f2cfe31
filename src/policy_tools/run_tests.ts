/**
 * Runs a policy's own `[[tests]]`: each example is judged exactly as
 * `explain_command` judges it (parse, policy, cwd and path jail; nothing
 * runs), and its code and reason compared with what the operator wrote.
 *
 * Why at every startup too: a policy edited without re-running its tests
 * must not start serving with a verdict its author said it would never give.
 *
 * @module
 */
import type { Policy, PolicyTest } from "../config/types.ts";
import type { ResultCode } from "../result/codes.ts";
import { checkCommand } from "../tools/check_command.ts";

/** One test's outcome. */
export interface PolicyTestOutcome {
  /** The `[[tests]]` entry as loaded. */
  readonly test: PolicyTest;
  /** True when the code matched `expect` (and the reason held `reason_contains`, if set). */
  readonly passed: boolean;
  /** The code the policy actually gave. */
  readonly got: ResultCode;
  /** The sentence the policy gave with it. */
  readonly reason: string;
  /** Why it failed, in one sentence; null when it passed. */
  readonly failure: string | null;
}

/**
 * Judges one test.
 *
 * @param policy The loaded policy (its jail is read for cwd and path checks).
 * @param test The entry.
 * @returns Its outcome.
 */
export async function runPolicyTest(policy: Policy, test: PolicyTest): Promise<PolicyTestOutcome> {
  const checked = await checkCommand(policy, test.command, test.cwd ?? undefined);
  const got: ResultCode = checked.ok ? "OK" : checked.code;
  let failure: string | null = null;
  if (got !== test.expect) {
    failure = `Policy test "${test.name}" expected ${test.expect} for ${
      JSON.stringify(test.command)
    } but got ${got}: ${checked.reason}`;
  } else if (test.reasonContains !== null && !checked.reason.includes(test.reasonContains)) {
    failure = `Policy test "${test.name}" expected a reason containing ${
      JSON.stringify(test.reasonContains)
    } but got: ${checked.reason}`;
  }
  return Object.freeze({ test, passed: failure === null, got, reason: checked.reason, failure });
}

/**
 * Judges every `[[tests]]` entry of `policy`, in file order.
 *
 * @param policy The loaded policy.
 * @returns One outcome per test.
 */
export async function runPolicyTests(policy: Policy): Promise<PolicyTestOutcome[]> {
  const outcomes: PolicyTestOutcome[] = [];
  for (const test of policy.tests) outcomes.push(await runPolicyTest(policy, test));
  return outcomes;
}

/**
 * The startup gate: the first failing test as one sentence, or null when all pass.
 *
 * @param policy The loaded policy.
 */
export async function firstFailingPolicyTest(policy: Policy): Promise<string | null> {
  for (const test of policy.tests) {
    const outcome = await runPolicyTest(policy, test);
    if (outcome.failure !== null) return outcome.failure;
  }
  return null;
}
