/**
 * `htmcp policy test FILE [--json]` and `htmcp policy lint FILE [--json]`:
 * policy-as-code checks for CI and for the operator, run on the policy file
 * exactly as the server would load it. Nothing runs.
 *
 * Exit codes: 0 all tests pass / no high finding; 1 a test failed / a high
 * finding; 2 usage or a policy that does not load.
 *
 * @module
 */
import { parseArgs } from "./args.ts";
import { processEnv } from "./env.ts";
import { loadPolicyForCli } from "./policy_arg.ts";
import { lintPolicy } from "../policy_tools/lint.ts";
import { runPolicyTests } from "../policy_tools/mod.ts";

const USAGE = "usage: htmcp policy test FILE [--json] | htmcp policy lint FILE [--json]";

/** @returns The exit code. */
export async function run(argv: readonly string[]): Promise<number> {
  const [verb, ...rest] = argv;
  if (verb !== "test" && verb !== "lint") {
    console.error(`htmcp: ${USAGE}`);
    return 2;
  }
  const parsed = parseArgs(rest, { values: ["--policy"], switches: ["--json"] });
  if (!parsed.ok) {
    console.error(`htmcp: ${parsed.message}`);
    return 2;
  }
  const file = parsed.args.positionals[0] ?? parsed.args.values.get("--policy");
  if (file === undefined || parsed.args.positionals.length > 1) {
    console.error(`htmcp: ${USAGE}`);
    return 2;
  }
  const policy = await loadPolicyForCli(file);
  if (policy === null) return 2;
  const json = parsed.args.switches.has("--json");

  if (verb === "lint") {
    const findings = lintPolicy(policy, processEnv().HOME);
    if (json) console.log(JSON.stringify({ findings }, null, 2));
    else if (findings.length === 0) console.log("No findings.");
    else {
      for (const finding of findings) {
        console.log(`${finding.severity.toUpperCase()} ${finding.id}: ${finding.message}`);
        console.log(`  fix: ${finding.fix}`);
      }
    }
    return findings.some((finding) => finding.severity === "high") ? 1 : 0;
  }

  const outcomes = await runPolicyTests(policy);
  const failed = outcomes.filter((outcome) => !outcome.passed).length;
  if (json) {
    console.log(JSON.stringify(
      {
        passed: outcomes.length - failed,
        failed,
        tests: outcomes.map((outcome) => ({
          name: outcome.test.name,
          command: outcome.test.command,
          expect: outcome.test.expect,
          got: outcome.got,
          passed: outcome.passed,
          reason: outcome.reason,
        })),
      },
      null,
      2,
    ));
  } else {
    for (const outcome of outcomes) {
      console.log(
        outcome.passed
          ? `ok   ${outcome.test.name}: ${outcome.got}`
          : `FAIL ${outcome.failure ?? outcome.test.name}`,
      );
    }
    console.log(`${outcomes.length - failed} passed, ${failed} failed`);
  }
  return failed === 0 ? 0 : 1;
}
