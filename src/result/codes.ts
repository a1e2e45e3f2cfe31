/**
 * The result-code taxonomy. Every outcome of a tool call carries exactly one
 * code, and every code names exactly one condition, so an operator reading the
 * audit log or a model reading a refusal never has to guess which layer spoke.
 *
 * Codes are a string-literal union, never a TypeScript `enum`: they are wire
 * values, stable across versions, and compared as plain strings by clients.
 *
 * @module
 */

/** Every code a `CommandResult` may carry. */
export type ResultCode =
  | "OK"
  | "POLICY_DENIED"
  | "PARSE_ERROR"
  | "TIMEOUT"
  | "OUTPUT_TRUNCATED"
  | "CWD_ESCAPE"
  | "PATH_ESCAPE"
  | "EXECUTOR_ERROR"
  | "RUNTIME_DENIED"
  | "CONTAINMENT_UNAVAILABLE"
  | "BUSY"
  | "SCOPE_DENIED"
  | "CANCELLED"
  | "AUDIT_UNAVAILABLE"
  | "JOB_RUNNING"
  | "JOB_NOT_FOUND"
  | "INTERNAL_ERROR"
  | "SYMLINK_REFUSED"
  | "NOT_A_REGULAR_FILE"
  | "FILE_TOO_LARGE"
  | "LINK_NOT_FOUND"
  | "LINK_LIMIT_REACHED"
  | "APPROVAL_PENDING"
  | "APPROVAL_DENIED"
  | "APPROVAL_EXPIRED";

/**
 * One-line meaning of each code. The README table is generated from the same
 * words; a test keeps the two in step.
 */
export const RESULT_CODE_MEANINGS: Readonly<Record<ResultCode, string>> = Object.freeze({
  OK: "The command ran (or, for explain_command, would be allowed); exit_code says how it ended.",
  POLICY_DENIED:
    "The policy refused the command: not allowlisted, denylisted, a deny_args rule, an escape-hatch guard, or shell syntax.",
  PARSE_ERROR: "The command text could not be split into words (for example an unbalanced quote).",
  TIMEOUT:
    "The command ran past its deadline (timeout_ms, default limits.timeout_ms); its process tree was killed.",
  OUTPUT_TRUNCATED:
    "The command ran, but stdout or stderr exceeded limits.max_output_bytes and was cut (ok stays true).",
  CWD_ESCAPE: "The requested working directory is not an existing folder inside the jail root.",
  PATH_ESCAPE: "An argument names a path that resolves outside the jail root.",
  EXECUTOR_ERROR: "The allowed command could not be started (for example the binary vanished).",
  RUNTIME_DENIED:
    "Deno's permission layer refused an operation our own checks allowed: a bug caught by the second layer.",
  CONTAINMENT_UNAVAILABLE:
    "The process-tree containment or kernel sandbox could not be set up, so the command was not started.",
  BUSY:
    "Too many commands ran at once (limits.max_concurrent) for as long as a call may wait (limits.queue_wait_ms); try again shortly.",
  SCOPE_DENIED:
    "The caller's OAuth token lacks the scope this tool needs (shell:read, shell:execute or audit:read).",
  CANCELLED:
    "The call or job was cancelled (client, job_cancel, or shutdown); the command's process tree was killed.",
  AUDIT_UNAVAILABLE:
    "The audit record could not be written, and audit_fail_mode is closed, so nothing ran.",
  JOB_RUNNING:
    "The command runs on as a job (background: true, or still running after limits.foreground_ms); job_id names it.",
  JOB_NOT_FOUND:
    "No job of this caller has that id (never started, another caller's, or expired after limits.job_retention_s).",
  INTERNAL_ERROR: "An unexpected server error; details are in the audit log, never in the reply.",
  SYMLINK_REFUSED:
    "A file link's path goes through a symbolic link (leading inside or outside the jail alike); links never follow one.",
  NOT_A_REGULAR_FILE:
    "A file link's path is not an existing regular file inside the jail (a folder, a device, a pipe, or nothing).",
  FILE_TOO_LARGE: "The file is larger than links.max_file_bytes, so no link was made.",
  LINK_NOT_FOUND:
    "No live link of this caller has that link_id (revoked, expired, used up, or another caller's).",
  LINK_LIMIT_REACHED:
    "The caller already holds links.max_links_per_caller live links; revoke one or let one expire.",
  APPROVAL_PENDING:
    "A prompt rule holds the command for a human, who has not answered within approval.wait_ms; the call is now a job (job_id, approval_id) that starts once the operator allows it: follow it with job_status.",
  APPROVAL_DENIED:
    "A human declined the prompted command (in the client, with htmcp approvals deny or on the approval page); nothing ran.",
  APPROVAL_EXPIRED:
    "The approval for the prompted command passed approval.ttl_s before it was answered or used; nothing ran.",
});

/** All codes, in table order. */
export const RESULT_CODES: readonly ResultCode[] = Object.freeze(
  Object.keys(RESULT_CODE_MEANINGS) as ResultCode[],
);

/**
 * The envelope every command tool returns, both as JSON text content and as
 * MCP `structuredContent`. Field names are snake_case because they are a wire
 * contract shared with non-TypeScript clients.
 */
export interface CommandResult {
  /** True for `OK`, `OUTPUT_TRUNCATED` and `JOB_RUNNING`; false for every refusal or failure. */
  readonly ok: boolean;
  /** The one condition the call ended in (see `RESULT_CODE_MEANINGS`). */
  readonly code: ResultCode;
  /** Redacted, then truncated, standard output ("" when nothing ran). */
  readonly stdout: string;
  /** Redacted, then truncated, standard error ("" when nothing ran). */
  readonly stderr: string;
  /** The child's exit status; null when it did not run or was killed. */
  readonly exit_code: number | null;
  /** Wall time of the whole call, in milliseconds. */
  readonly duration_ms: number;
  /** A sentence a person understands: why it was allowed or refused. */
  readonly policy_reason: string;
  /**
   * A composed command's stages in order, each with its exit status (null
   * when `&&`/`||` skipped it or the plan was killed). `exit_code` is the
   * last stage run's, as a shell reports it (no pipefail). Absent for a
   * plain command.
   */
  readonly stages?: readonly StageResult[];
  /**
   * The job that holds this call's output or run (`JOB_RUNNING`, or a reply
   * whose output was cut: the rest is paged with `job_output`). Absent otherwise.
   */
  readonly job_id?: string;
  /** The approval a prompted command waits for (`APPROVAL_PENDING`, `APPROVAL_*`). */
  readonly approval_id?: string;
}

/** One stage of a composed command in a result. */
export interface StageResult {
  /** The stage's argv as it ran (globs expanded). */
  readonly argv: readonly string[];
  /** The stage's exit status; null when `&&`/`||` skipped it or the plan was killed. */
  readonly exit_code: number | null;
}

/** Codes for which `ok` is true. */
export function isOkCode(code: ResultCode): boolean {
  return code === "OK" || code === "OUTPUT_TRUNCATED" || code === "JOB_RUNNING";
}
