/**
 * `htmcp explain --policy FILE -- COMMAND...`: prints the verdict an operator
 * would see for COMMAND, as the `CommandResult` JSON, and runs nothing.
 *
 * The words after `--` are judged exactly as the shell split them:
 * `htmcp explain -- grep "a b" file` judges `["grep", "a b", "file"]`, never
 * the words of a re-split join. To judge a command *text* the way
 * `run_command` receives it from a model, pass it as one word with
 * `--text`: `htmcp explain --text 'grep "a b" file'`.
 *
 * Exit code: 0 when the command would be allowed, 1 when refused, 2 on usage.
 *
 * @module
 */
import { parseArgs, VERB_FLAGS } from "./args.ts";
import { loadPolicyForCli } from "./policy_arg.ts";
import { checkCommand } from "../tools/check_command.ts";
import { makeResult } from "../tools/envelope.ts";

/** @returns The exit code. */
export async function run(argv: readonly string[]): Promise<number> {
  const parsed = parseArgs(argv, VERB_FLAGS.get("explain") ?? {});
  if (!parsed.ok) {
    console.error(`htmcp: ${parsed.message}`);
    return 2;
  }
  const text = parsed.args.values.get("--text");
  const words = parsed.args.rest ?? parsed.args.positionals;
  if (text !== undefined && words.length > 0) {
    console.error("htmcp: explain takes either --text TEXT or words after --, not both.");
    return 2;
  }
  if (text === undefined && words.length === 0) {
    console.error("htmcp: explain needs a command after --, e.g. htmcp explain -- ls -la");
    return 2;
  }
  const policy = await loadPolicyForCli(parsed.args.values.get("--policy"));
  if (policy === null) return 2;
  const startedAt = performance.now();
  const command = text ?? words;
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
