/**
 * `explain_command`: the verdict `run_command` would reach, without running
 * anything. It runs the same checks (policy, cwd jail, argument jail) through
 * the same function, so an explanation can never disagree with a run.
 *
 * @module
 */
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import type { CommandResult, ResultCode } from "../result/codes.ts";
import type { ServerContext } from "../context/mod.ts";
import { type CallerIdentity, hasScope } from "./caller.ts";
import { checkCommandInput } from "./check_command.ts";
import { makeResult, toToolResult } from "./envelope.ts";
import { stageResults } from "./plan_request.ts";
import { internalError } from "./internal_error.ts";
import { withSandboxNotice } from "./sandbox_notice.ts";
import { snapshotCommandInput } from "./snapshot.ts";

export const EXPLAIN_COMMAND_DESCRIPTION =
  "Explain whether run_command would allow a command, and why, without running it. " +
  "Returns the same envelope as run_command with exit_code null and empty output; " +
  "ok and code are the verdict (a refusal is a successful explanation, not a failed call).";

/**
 * The codes that are a verdict on the command. Any of them is a successful
 * explanation (MCP `isError: false`): clients treat `isError` as "the tool
 * failed", and some drop the structured verdict when it is set. Other codes
 * (a missing scope, an internal error) mean no explanation was given.
 */
const VERDICT_CODES: ReadonlySet<ResultCode> = new Set<ResultCode>([
  "OK",
  "POLICY_DENIED",
  "PARSE_ERROR",
  "CWD_ESCAPE",
  "PATH_ESCAPE",
]);

/**
 * The MCP tool result of an explanation: `isError` only when no verdict was reached.
 *
 * @param result What {@linkcode explainCommandTool} returned.
 */
export function explainToolResult(result: CommandResult): CallToolResult {
  return toToolResult(result, !VERDICT_CODES.has(result.code));
}

/**
 * Explains `rawInput.command` for `caller`. Audited as an `explain` record.
 */
export function explainCommandTool(
  context: ServerContext,
  caller: CallerIdentity,
  rawInput: unknown,
): Promise<CommandResult> {
  const startedAt = performance.now();
  const callId = crypto.randomUUID();
  return context.track(
    explainChecked(context, caller, rawInput, startedAt, callId).catch((error) =>
      internalError(context, { callId, tool: "explain_command", caller, startedAt, error })
    ).then((result) => withSandboxNotice(context, result)),
  );
}

async function explainChecked(
  context: ServerContext,
  caller: CallerIdentity,
  rawInput: unknown,
  startedAt: number,
  callId: string,
): Promise<CommandResult> {
  const base = { call_id: callId, tool: "explain_command", client_id: caller.clientId };
  const snap = snapshotCommandInput(rawInput);
  if (!snap.ok) {
    await context.audit.writeExplain({
      ...base,
      command_raw: "",
      argv: null,
      verdict: "deny",
      code: "POLICY_DENIED",
      reason: snap.reason,
    });
    return makeResult("POLICY_DENIED", { policyReason: snap.reason, startedAt });
  }
  const input = snap.input;
  const command = input.commandRaw;
  if (!hasScope(caller, "shell:read")) {
    const reason = 'This token lacks the "shell:read" scope that explain_command needs.';
    await context.audit.writeExplain({
      ...base,
      command_raw: command,
      argv: null,
      verdict: "deny",
      code: "SCOPE_DENIED",
      reason,
    });
    return makeResult("SCOPE_DENIED", { policyReason: reason, startedAt });
  }
  // explain_command does the same lookups as run_command, so it takes a
  // slot too: with only shell:read, path checks must not be a way around
  // the concurrency cap. It runs nothing, so it never waits in the queue:
  // a dry run answers at once, and it cannot overtake a command that waits.
  const slot = context.limiter.tryAcquire(
    caller.clientId,
    context.policy.http.maxConcurrentPerClient,
  );
  if (!slot.ok) {
    await context.audit.writeExplain({
      ...base,
      command_raw: command,
      argv: null,
      verdict: "deny",
      code: slot.code,
      reason: slot.reason,
    });
    return makeResult(slot.code, { policyReason: slot.reason, startedAt });
  }
  let checked;
  try {
    checked = await checkCommandInput(context.policy, input, context.executor.listFolder);
  } finally {
    slot.release();
  }
  const code = checked.ok ? "OK" : checked.code;
  const reason = checked.ok
    ? `Would run ${checked.run.path} with ${checked.run.args.length} argument(s): ${checked.reason}`
    : checked.reason;
  await context.audit.writeExplain({
    ...base,
    command_raw: command,
    // As run_command does: the argv that would run, the policy's safety options included.
    argv: checked.ok ? [checked.argv[0] as string, ...checked.run.args] : checked.argv,
    verdict: checked.ok ? "allow" : "deny",
    code,
    reason,
  });
  // A composed command's plan, every stage as it would run (nothing ran: no status).
  const plan = checked.ok ? checked.plan : null;
  return makeResult(code, {
    policyReason: reason,
    startedAt,
    ...(plan === null ? {} : { stages: stageResults(plan, []) }),
  });
}
