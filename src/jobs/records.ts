/**
 * The durable shape of a job: what every server sharing a state directory
 * reads and writes, and the view a caller is shown.
 *
 * A record read from disk is untrusted in shape (another version, a torn
 * edit by hand): anything that does not match is treated as absent, never
 * half-used.
 *
 * @module
 */
import { RESULT_CODES, type ResultCode } from "../result/codes.ts";

/**
 * `running` until it ends; `lost` when the server that ran it stopped without
 * recording its end. `awaiting_approval`: a prompted call that outlived
 * `approval.wait_ms`; nothing runs until the operator allows it, then it is
 * `running` (or `ended` with the refusal, nothing having run).
 */
export type JobState = "awaiting_approval" | "running" | "ended" | "lost";

/** A job whose end is still ahead: running, or waiting for its approval. */
export function isLiveState(state: JobState): boolean {
  return state === "running" || state === "awaiting_approval";
}

/** How the job came to be: asked for, or a foreground call that outlived `limits.foreground_ms`. */
export type JobOrigin = "background" | "adaptive" | "foreground";

export interface JobRecord {
  readonly id: string;
  /** `local` (stdio, or HTTP without OAuth) or `client:<id>`: the same key sessions use. */
  readonly owner: string;
  readonly callId: string;
  /** The command text as the caller gave it (redacted). */
  readonly command: string;
  /** The argv that runs (redacted), as in the audit attempt. */
  readonly argv: readonly string[];
  /** Working directory relative to the jail root. */
  readonly cwd: string;
  readonly origin: JobOrigin;
  readonly state: JobState;
  /** The run's result code once ended; null while running or lost. */
  readonly code: ResultCode | null;
  readonly exitCode: number | null;
  /** A sentence: how it ended, or why it is lost. */
  readonly reason: string;
  readonly startedMs: number;
  readonly endedMs: number | null;
  readonly timeoutMs: number;
  readonly stdoutBytes: number;
  readonly stderrBytes: number;
  readonly truncated: boolean;
  /** The server process that runs it: who may kill it, and whose heartbeat proves it alive. */
  readonly writer: string;
  readonly pid: number;
  /** Set by any server asked to cancel; the owning server sees it and kills the tree. */
  readonly cancelRequestedMs: number | null;
  /** The last lines of output (redacted, bounded) as of the last progress tick. */
  readonly tail: string;
  /** The approval this job waits for or ran under (a prompted command). */
  readonly approvalId?: string;
}

/** The stored, redacted output of a job (at most `limits.job_output_bytes` per stream). */
export interface JobOutput {
  readonly stdout: string;
  readonly stderr: string;
}

const STATES: ReadonlySet<string> = new Set(["awaiting_approval", "running", "ended", "lost"]);
const ORIGINS: ReadonlySet<string> = new Set(["background", "adaptive", "foreground"]);
const CODES: ReadonlySet<string> = new Set(RESULT_CODES);

const isString = (v: unknown): v is string => typeof v === "string";
const isCount = (v: unknown): v is number => Number.isSafeInteger(v) && (v as number) >= 0;
const isIntOrNull = (v: unknown) => v === null || Number.isSafeInteger(v);

/** True when `value` has every field of a `JobRecord` with the right type. */
export function isJobRecord(value: unknown): value is JobRecord {
  if (value === null || typeof value !== "object" || Array.isArray(value)) return false;
  const r = value as Record<string, unknown>;
  return isString(r.id) && isString(r.owner) && isString(r.callId) && isString(r.command) &&
    Array.isArray(r.argv) && r.argv.every(isString) && isString(r.cwd) &&
    isString(r.origin) && ORIGINS.has(r.origin) && isString(r.state) && STATES.has(r.state) &&
    (r.code === null || (isString(r.code) && CODES.has(r.code))) && isIntOrNull(r.exitCode) &&
    isString(r.reason) && isCount(r.startedMs) && (r.endedMs === null || isCount(r.endedMs)) &&
    isCount(r.timeoutMs) && isCount(r.stdoutBytes) && isCount(r.stderrBytes) &&
    typeof r.truncated === "boolean" && isString(r.writer) && isCount(r.pid) &&
    (r.cancelRequestedMs === null || isCount(r.cancelRequestedMs)) && isString(r.tail) &&
    (r.approvalId === undefined || isString(r.approvalId));
}

/** True when `value` is a stored `JobOutput`. */
export function isJobOutput(value: unknown): value is JobOutput {
  if (value === null || typeof value !== "object") return false;
  const r = value as Record<string, unknown>;
  return isString(r.stdout) && isString(r.stderr);
}

/** What a caller sees of a job (snake_case: a wire shape). */
export interface JobView {
  readonly job_id: string;
  readonly state: JobState;
  readonly origin: JobOrigin;
  readonly command: string;
  readonly argv: readonly string[];
  readonly cwd: string;
  readonly code: ResultCode | null;
  readonly exit_code: number | null;
  readonly reason: string;
  readonly started_at: string;
  readonly ended_at: string | null;
  readonly elapsed_ms: number;
  readonly timeout_ms: number;
  readonly stdout_bytes: number;
  readonly stderr_bytes: number;
  readonly truncated: boolean;
  readonly cancel_requested: boolean;
  readonly tail: string;
  readonly approval_id?: string;
}

/** The caller's view of `record` at `nowMs`. */
export function jobView(record: JobRecord, nowMs: number): JobView {
  return {
    job_id: record.id,
    state: record.state,
    origin: record.origin,
    command: record.command,
    argv: record.argv,
    cwd: record.cwd,
    code: record.code,
    exit_code: record.exitCode,
    reason: record.reason,
    started_at: new Date(record.startedMs).toISOString(),
    ended_at: record.endedMs === null ? null : new Date(record.endedMs).toISOString(),
    elapsed_ms: Math.max(0, (record.endedMs ?? nowMs) - record.startedMs),
    timeout_ms: record.timeoutMs,
    stdout_bytes: record.stdoutBytes,
    stderr_bytes: record.stderrBytes,
    truncated: record.truncated,
    cancel_requested: record.cancelRequestedMs !== null,
    tail: record.tail,
    ...(record.approvalId === undefined ? {} : { approval_id: record.approvalId }),
  };
}

/** A fresh job id: 128 random bits, base64url, so always one plain record name. */
export function newJobId(): string {
  const bytes = crypto.getRandomValues(new Uint8Array(16));
  return "job_" +
    btoa(String.fromCharCode(...bytes)).replaceAll("+", "-").replaceAll("/", "_").replaceAll(
      "=",
      "",
    );
}

/** The answer for an id that names no job of this caller: the same for absent and foreign. */
export function jobNotFound(id: string): string {
  return `No job "${id}" of this caller exists (it may have expired).`;
}
