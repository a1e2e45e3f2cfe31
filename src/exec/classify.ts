/**
 * Telling the launcher's own failures apart from the command's. The helper
 * (and bwrap) report through the command's stderr and exit status, so this
 * reads the first stderr line: both prefix their messages with their name.
 * A command that prints such a line itself can at worst mislabel its own
 * failure; it cannot make a refused command look like it ran.
 *
 * @module
 */

/** What a finished launcher chain says about the command. */
export type LaunchVerdict =
  | { readonly kind: "ran" }
  | { readonly kind: "missing_binary"; readonly detail: string }
  | { readonly kind: "setup_failed"; readonly detail: string };

// "failed to execute" (htmcp-spawn), "execvp" (bwrap): the final exec of the
// command itself failed.
const EXEC_FAILURE = /^(?:htmcp-spawn: failed to execute|bwrap: execvp)\b/;
const TOOL_PREFIX = /^(?:htmcp-spawn|bwrap): /;

/**
 * Classifies a finished chain.
 *
 * @param exitCode The launcher's exit status (null when signalled).
 * @param stderrHead The first bytes of the captured stderr, decoded.
 * @param commandPath The command's absolute path, as the launcher named it
 *   (null for a plan, whose stages' exec failures are their own statuses).
 */
export function classifyLaunch(
  exitCode: number | null,
  stderrHead: string,
  commandPath: string | null,
): LaunchVerdict {
  if (exitCode === null || exitCode === 0) return { kind: "ran" };
  const firstLine = stderrHead.split("\n", 1)[0] ?? "";
  const namesCommand = commandPath !== null && firstLine.includes(commandPath);
  if (EXEC_FAILURE.test(firstLine) && namesCommand) {
    return { kind: "missing_binary", detail: firstLine };
  }
  // The helper exits 125 when it cannot set up the containment and 126/127
  // when it cannot start bwrap; bwrap exits 1 when it fails itself.
  if (
    (exitCode === 1 || exitCode === 125 || exitCode === 126 || exitCode === 127) &&
    TOOL_PREFIX.test(firstLine) && !namesCommand
  ) {
    return { kind: "setup_failed", detail: firstLine };
  }
  return { kind: "ran" };
}
