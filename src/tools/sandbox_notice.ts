/**
 * The tail every reply's `policy_reason` carries while the kernel sandbox is
 * off: a model (and whoever reads its transcript) is told on every call, not
 * only in `describe_policy`, that the jail is advisory.
 *
 * @module
 */
import type { CommandResult } from "../result/codes.ts";
import type { ServerContext } from "../context/mod.ts";
import { PATH_CHECK_ONLY_TAIL } from "../sandbox/mod.ts";

/**
 * Returns `result` unchanged in bwrap mode, or a copy whose `policy_reason`
 * ends with `PATH_CHECK_ONLY_TAIL` in mode none.
 *
 * @param context The server context (its executor says which mode is in force).
 * @param result A tool's envelope.
 */
export function withSandboxNotice(
  context: Pick<ServerContext, "executor">,
  result: CommandResult,
): CommandResult {
  if (context.executor.describe().mode !== "none") return result;
  return Object.freeze({
    ...result,
    policy_reason: `${result.policy_reason} ${PATH_CHECK_ONLY_TAIL}`,
  });
}
