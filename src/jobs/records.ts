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

/**
 * One job as stored (kind `jobs`): written by the server that runs it,
 * read by every server sharing the store, and shown to its owner only
 * (through {@linkcode jobView}).
 */
export interface JobRecord {
  /** The job's id (`newJobId`), also the record's name. */
  readonly id: string;
  /** `local` (stdio, or HTTP without OAuth) or `client:<id>`: the same key sessions use. */
  readonly owner: string;
  /** The audit id of the call that started it: its attempt and outcome records carry it. */
  readonly callId: string;
  /** The command text as the caller gave it (redacted). */
  readonly command: string;
  /** The argv that runs (redacted), as in the audit attempt. */
  readonly argv: readonly string[];
  /** Working directory relative to the jail root. */
  readonly cwd: string;
  /** Why it is a job: asked for, outlived `limits.foreground_ms`, or a foreground call's cut output. */
  readonly origin: JobOrigin;
  /** Where the job is in its life. */
  readonly state: JobState;
  /** The run's result code once ended; null while running or lost. */
  readonly code: ResultCode | null;
  /** The command's exit status once ended; null while running, when lost, killed or never run. */
  readonly exitCode: number | null;
  /** A sentence: how it ended, or why it is lost. */
  readonly reason: string;
  /** When the run started (epoch milliseconds). */
  readonly startedMs: number;
  /** When it ended or was found lost (epoch milliseconds); null while live. */
  readonly endedMs: number | null;
  /** The run's deadline in milliseconds. */
  readonly timeoutMs: number;
  /** Bytes of standard output produced so far (before redaction and caps). */
  readonly stdoutBytes: number;
  /** Bytes of standard error produced so far (before redaction and caps). */
  readonly stderrBytes: number;
  /** True when the run ended `OUTPUT_TRUNCATED`: the stored output is cut too. */
  readonly truncated: boolean;
  /** The server process that runs it: who may kill it, and whose heartbeat proves it alive. */
  readonly writer: string;
  /** The process id of that server, for the operator reading a `lost` reason. */
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
  /** Standard output, redacted, cut by `capStored`. */
  readonly stdout: string;
  /** Standard error, redacted, cut by `capStored`. */
  readonly stderr: string;
}

const STATES: ReadonlySet<string> = new Set(["awaiting_approval", "running", "ended", "lost"]);
const ORIGINS: ReadonlySet<string> = new Set(["background", "adaptive", "foreground"]);
const CODES: ReadonlySet<string> = new Set(RESULT_CODES);

const isString = (v: unknown): v is string => typeof v === "string";
const isCount = (v: unknown): v is number => Number.isSafeInteger(v) && (v as number) >= 0;
const isIntOrNull = (v: unknown) => v === null || Number.isSafeInteger(v);

/**
 * True when `value` has every field of a `JobRecord` with the right type
 * (a known state, origin and result code). A stored value that fails is
 * treated as absent.
 */
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

/**
 * What a caller sees of a job (snake_case: a wire shape), as `job_status`
 * and `job_list` return it. The server-side fields of a record (owner,
 * writer, pid, call id) stay out of it.
 */
export interface JobView {
  /** The job's id, for `job_status`, `job_output` and `job_cancel`. */
  readonly job_id: string;
  /** Where the job is in its life. */
  readonly state: JobState;
  /** Why it is a job. */
  readonly origin: JobOrigin;
  /** The command text as given (redacted). */
  readonly command: string;
  /** The argv that runs (redacted). */
  readonly argv: readonly string[];
  /** Working directory relative to the jail root. */
  readonly cwd: string;
  /** The run's result code once ended; null while live or when lost. */
  readonly code: ResultCode | null;
  /** The command's exit status once ended; null otherwise. */
  readonly exit_code: number | null;
  /** A sentence: how it ended, or why it is lost. */
  readonly reason: string;
  /** When it started (ISO 8601). */
  readonly started_at: string;
  /** When it ended or was found lost (ISO 8601); null while live. */
  readonly ended_at: string | null;
  /** Milliseconds from start to end, or to now while live. */
  readonly elapsed_ms: number;
  /** The run's deadline in milliseconds. */
  readonly timeout_ms: number;
  /** Bytes of standard output produced so far. */
  readonly stdout_bytes: number;
  /** Bytes of standard error produced so far. */
  readonly stderr_bytes: number;
  /** True when the output was cut at `limits.max_output_bytes`. */
  readonly truncated: boolean;
  /** True once any server was asked to cancel it. */
  readonly cancel_requested: boolean;
  /** The last lines of output (redacted) as of the last progress tick. */
  readonly tail: string;
  /** The approval this job waits for or ran under; absent when none. */
  readonly approval_id?: string;
}

/**
 * The caller's view of `record` at `nowMs`.
 *
 * @param record A record read with the caller's owner key.
 * @param nowMs The current time (epoch milliseconds): a live job's elapsed time runs to it.
 * @returns The wire shape, with ISO times and snake_case names.
 */
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
