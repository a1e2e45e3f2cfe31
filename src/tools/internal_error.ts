/**
 * The last line of defence of every tool: an unexpected throw becomes
 * `INTERNAL_ERROR` with a generic sentence. The details (message and stack)
 * go to the audit log for the operator, redacted; the client never sees them,
 * because a stack trace or an error message can carry paths, tokens or
 * secrets from the server's side.
 *
 * @module
 */
import type { CommandResult } from "../result/codes.ts";
import type { ServerContext } from "../context/mod.ts";
import type { CallerIdentity } from "./caller.ts";
import { makeResult } from "./envelope.ts";

export const INTERNAL_ERROR_REASON =
  "The server hit an unexpected error; the operator can find the details in the audit log.";

/** Records `error` in the audit log and returns the generic envelope. */
export async function internalError(
  context: ServerContext,
  details: {
    callId: string;
    tool: string;
    caller: CallerIdentity;
    startedAt: number;
    error: unknown;
  },
): Promise<CommandResult> {
  const error = details.error;
  const text = error instanceof Error
    ? `${error.name}: ${error.message}\n${error.stack ?? ""}`
    : String(error);
  try {
    // The log redacts event strings itself.
    await context.audit.writeEvent("internal_error", {
      call_id: details.callId,
      where: details.tool,
      message: text.slice(0, 4096),
    });
  } catch {
    // The log itself failed: stderr is the operator's last channel.
    console.error(`htmcp: internal error in ${details.tool} (call ${details.callId})`);
  }
  return makeResult("INTERNAL_ERROR", {
    policyReason: INTERNAL_ERROR_REASON,
    startedAt: details.startedAt,
  });
}
