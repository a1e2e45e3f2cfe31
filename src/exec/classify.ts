/**
 * Telling the launcher chain's own failures apart from the command's. The
 * chain reports through the command's stderr and exit status, so this reads
 * the first stderr line: our tools prefix their messages with their name.
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

// "failed to run command" (timeout), "failed to execute" (setpriv, prlimit,
// unshare), "execvp" (bwrap): the final exec of the command itself failed.
// coreutils' timeout names itself by its argv[0], which the chain gives as
// an absolute path ("/usr/bin/timeout: failed to run command ..."): without
// the optional folder, a bwrap gone after startup read as the command's own
// exit 127 instead of CONTAINMENT_UNAVAILABLE.
const EXEC_FAILURE =
  /^(?:\/[^\s:]*\/)?(?:timeout|prlimit|setpriv|bwrap): (?:failed to run command|failed to execute|execvp)\b/;
const TOOL_PREFIX = /^(?:\/[^\s:]*\/)?(?:setpriv|unshare|setsid|timeout|bwrap|prlimit): /;

/**
 * Classifies a finished chain.
 *
 * @param exitCode The launcher's exit status (null when signalled).
 * @param stderrHead The first bytes of the captured stderr, decoded.
 * @param commandPath The command's absolute path, as the chain named it.
 */
export function classifyLaunch(
  exitCode: number | null,
  stderrHead: string,
  commandPath: string,
): LaunchVerdict {
  if (exitCode === null || exitCode === 0) return { kind: "ran" };
  const firstLine = stderrHead.split("\n", 1)[0] ?? "";
  if (EXEC_FAILURE.test(firstLine) && firstLine.includes(commandPath)) {
    return { kind: "missing_binary", detail: firstLine };
  }
  // timeout exits 125 when it fails itself, setpriv/unshare/setsid/bwrap exit 1 (or
  // 126/127 when they cannot exec the next tool) with a prefixed message.
  if (
    (exitCode === 1 || exitCode === 125 || exitCode === 126 || exitCode === 127) &&
    TOOL_PREFIX.test(firstLine) && !firstLine.includes(commandPath)
  ) {
    return { kind: "setup_failed", detail: firstLine };
  }
  return { kind: "ran" };
}
