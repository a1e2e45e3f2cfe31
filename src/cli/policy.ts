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
import {
  type DiffExample,
  diffPolicies,
  examplesFromAuditLog,
  examplesFromLines,
  examplesFromTests,
  lintPolicy,
  policyHash,
  runPolicyTests,
  suggestFromAuditLog,
} from "../policy_tools/mod.ts";

const USAGE = "usage: htmcp policy test FILE [--json] | htmcp policy lint FILE [--json] | " +
  "htmcp policy diff OLD NEW [--replay AUDIT.jsonl] [--commands FILE] [--json] | " +
  "htmcp policy suggest --from AUDIT.jsonl [--policy FILE] [--json]";

/** @returns The exit code. */
export async function run(argv: readonly string[]): Promise<number> {
  const [verb, ...rest] = argv;
  if (verb === "diff") return await runDiff(rest);
  if (verb === "suggest") return await runSuggest(rest);
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
  const hash = await policyHash(policy);
  if (json) {
    console.log(JSON.stringify(
      {
        policy_hash: hash,
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
    console.log(`policy ${hash}`);
    console.log(`${outcomes.length - failed} passed, ${failed} failed`);
  }
  return failed === 0 ? 0 : 1;
}

/**
 * `policy diff OLD NEW`: exit 0 when no verdict changes, 1 when some do
 * (so CI can require a reviewed change), 2 on usage.
 */
async function runDiff(argv: readonly string[]): Promise<number> {
  const parsed = parseArgs(argv, { values: ["--replay", "--commands"], switches: ["--json"] });
  if (!parsed.ok) {
    console.error(`htmcp: ${parsed.message}`);
    return 2;
  }
  const [oldFile, newFile, ...extra] = parsed.args.positionals;
  if (oldFile === undefined || newFile === undefined || extra.length > 0) {
    console.error(`htmcp: ${USAGE}`);
    return 2;
  }
  const oldPolicy = await loadPolicyForCli(oldFile);
  const newPolicy = oldPolicy === null ? null : await loadPolicyForCli(newFile);
  if (oldPolicy === null || newPolicy === null) return 2;
  const examples: DiffExample[] = [];
  const replay = parsed.args.values.get("--replay");
  const commands = parsed.args.values.get("--commands");
  try {
    if (replay !== undefined) {
      examples.push(...examplesFromAuditLog(await Deno.readTextFile(replay), oldPolicy.jailRoot));
    }
    if (commands !== undefined) {
      examples.push(...examplesFromLines(await Deno.readTextFile(commands)));
    }
  } catch (error) {
    console.error(`htmcp: cannot read ${replay ?? commands}: ${(error as Error).message}`);
    return 2;
  }
  examples.push(...examplesFromTests(oldPolicy, newPolicy));
  const { judged, changes } = await diffPolicies(oldPolicy, newPolicy, examples);
  if (parsed.args.switches.has("--json")) {
    console.log(JSON.stringify({ judged, changes }, null, 2));
  } else {
    for (const change of changes) {
      const where = change.example.cwd === null ? "" : ` (cwd ${change.example.cwd})`;
      console.log(
        `${
          JSON.stringify(change.example.command)
        }${where}: ${change.old.code} -> ${change.new.code}`,
      );
      console.log(`  old: ${change.old.reason}`);
      console.log(`  new: ${change.new.reason}`);
    }
    console.log(`${changes.length} of ${judged} commands change verdict.`);
  }
  return changes.length === 0 ? 0 : 1;
}

/** `policy suggest --from LOG`: prints grouped suggestions; exit 0, 2 on usage. */
async function runSuggest(argv: readonly string[]): Promise<number> {
  const parsed = parseArgs(argv, { values: ["--from", "--policy"], switches: ["--json"] });
  const from = parsed.ok ? parsed.args.values.get("--from") : undefined;
  if (!parsed.ok || from === undefined || parsed.args.positionals.length > 0) {
    console.error(`htmcp: ${parsed.ok ? USAGE : parsed.message}`);
    return 2;
  }
  const policyFile = parsed.args.values.get("--policy");
  const policy = policyFile === undefined ? null : await loadPolicyForCli(policyFile);
  if (policyFile !== undefined && policy === null) return 2;
  let text: string;
  try {
    text = await Deno.readTextFile(from);
  } catch (error) {
    console.error(`htmcp: cannot read ${from}: ${(error as Error).message}`);
    return 2;
  }
  const denylist = new Set([...(policy?.denylist ?? [])].map((name) => name.toLowerCase()));
  const suggestions = suggestFromAuditLog(text, denylist);
  if (parsed.args.switches.has("--json")) {
    console.log(JSON.stringify({ suggestions }, null, 2));
    return 0;
  }
  if (suggestions.length === 0) console.log("No refused attempts in the log.");
  for (const suggestion of suggestions) {
    console.log(`${suggestion.kind} ${suggestion.subject}: ${suggestion.count} refused`);
    for (const sample of suggestion.samples) console.log(`  e.g. ${JSON.stringify(sample)}`);
    console.log(`  ${suggestion.advice}`);
  }
  console.log("Nothing was changed: review these and edit the policy yourself.");
  return 0;
}
