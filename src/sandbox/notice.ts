/**
 * The words for "the kernel sandbox is off". One text per audience, defined
 * once, so the startup line, `htmcp check`, `describe_policy`, the server
 * instructions and every reply's `policy_reason` cannot drift apart or
 * forget to say it.
 *
 * @module
 */

/** Appended to every `policy_reason` while `[sandbox] mode = "none"` is in force. */
export const PATH_CHECK_ONLY_TAIL = "[sandbox off: the jail is advisory]";

/** The operator's startup warning (stderr, `htmcp check`). */
export const PATH_CHECK_ONLY_WARNING =
  'THE KERNEL SANDBOX IS OFF ([sandbox] mode = "none", accept_path_check_only = true): the jail is advisory; only the path checks stand between commands and the host.';

/**
 * What the model (and `describe_policy`) is told.
 *
 * @param commandUid The uid commands run as on the host.
 */
export function pathCheckOnlyNotice(commandUid: number): string {
  return `The kernel sandbox is OFF ([sandbox] mode = "none"): the jail is advisory. Commands run as uid ${commandUid} directly on the host, confined only by the policy's path checks, which races and tool compositions can defeat; the network is reachable. Each step of a command line is checked before any runs, so in this mode nothing may follow a step that may rename files or make links (mv, cp, tar, git, ...): send such steps as separate calls. Only git itself works inside a git folder (.git): other commands may not read, write or run there.`;
}
