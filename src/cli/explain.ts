/**
 * `htmcp explain --policy FILE -- COMMAND...`: prints the verdict an operator
 * would see for COMMAND, as the `CommandResult` JSON, and runs nothing. The
 * words after `--` are joined with single spaces into the command text a model
 * would send, so `-- 'ls -la | wc'` and `-- ls -la` both work.
 *
 * Exit code: 0 when the command would be allowed, 1 when refused, 2 on usage.
 *
 * @module
 */
import { parseArgs } from "./args.ts";
import { loadPolicyForCli } from "./policy_arg.ts";
import { checkCommand } from "../tools/check_command.ts";
import { makeResult } from "../tools/envelope.ts";

/** @returns The exit code. */
export async function run(argv: readonly string[]): Promise<number> {
  const parsed = parseArgs(argv, { values: ["--policy", "--cwd"] });
  if (!parsed.ok) {
    console.error(`htmcp: ${parsed.message}`);
    return 2;
  }
  const words = parsed.args.rest ?? parsed.args.positionals;
  if (words.length === 0) {
    console.error("htmcp: explain needs a command after --, e.g. htmcp explain -- ls -la");
    return 2;
  }
  const policy = await loadPolicyForCli(parsed.args.values.get("--policy"));
  if (policy === null) return 2;
  const startedAt = performance.now();
  const command = words.join(" ");
  const checked = await checkCommand(policy, command, parsed.args.values.get("--cwd"));
  const result = checked.ok
    ? makeResult("OK", {
      policyReason: `Would run ${checked.command.path} in ${checked.cwd}: ${checked.reason}`,
      startedAt,
    })
    : makeResult(checked.code, { policyReason: checked.reason, startedAt });
  console.log(JSON.stringify({ ...result, argv: checked.argv }, null, 2));
  return checked.ok ? 0 : 1;
}
