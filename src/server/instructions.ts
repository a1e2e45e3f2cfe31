/**
 * The server instructions clients show the model (`initialize` and
 * `server/discover`): generated from the policy.
 *
 * @module
 */
import { pathCheckOnlyNotice } from "../sandbox/mod.ts";
import type { ServerContext } from "./context.ts";

/** The instructions for `context`'s policy. */
export function serverInstructions(context: ServerContext): string {
  const sandbox = context.executor.describe();
  return "htmcp runs allowlisted commands without a shell in a jailed directory. Call describe_policy first." +
    (sandbox.mode === "none" ? ` ${pathCheckOnlyNotice(sandbox.commandUid)}` : "");
}
