/**
 * The words for "full-control mode is on", one text per audience, defined
 * once so the startup line, `describe_policy`, the server instructions and
 * the tool description cannot drift apart.
 *
 * @module
 */

/** The operator's startup warning (stderr, `htmcp check`). */
export const FULL_CONTROL_WARNING =
  "FULL-CONTROL MODE IS ON ([mode] full_control = true): run_command text runs as `bash -c TEXT` with interpreters allowed; the kernel sandbox is the boundary, the policy only refuses denylisted first words (best effort).";

/** What the model (and `describe_policy`) is told. */
export const FULL_CONTROL_NOTICE =
  "Full-control mode is on: command text runs as bash -c TEXT (pipes, variables, loops, $(...) and interpreters work) inside the kernel sandbox, which is the boundary; only the jail is writable. The denylist still refuses a denylisted first word of any simple command. argv input is judged by the ordinary policy.";

/** `run_command`'s description in full-control mode. */
export const FULL_CONTROL_RUN_DESCRIPTION: string =
  "Run a bash command line inside the sandboxed jail directory: the text runs as " +
  "bash -c TEXT, so pipes, redirections, variables, loops, $(...), && and " +
  "interpreters (python3, node, sh) all work. Only the jail is writable and the " +
  "network is as describe_policy says. Denylisted commands are refused wherever " +
  "they start a simple command. argv (a list of words) runs one allowlisted " +
  "command without a shell. Call describe_policy first.";
