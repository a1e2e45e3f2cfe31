/**
 * `job_status`, `job_output`, `job_cancel`, `job_list`: a caller's view of
 * its own jobs (docs/jobs.md).
 *
 * Deny on failure: a job of another caller, a malformed id and an expired
 * job all answer the same `JOB_NOT_FOUND`, so an id reveals nothing about
 * anyone else's work. Reading needs `shell:read`; cancelling, which kills a
 * process tree, needs `shell:execute` like starting one.
 *
 * @module
 */
import type { ResultCode } from "../result/codes.ts";
import type { ServerContext } from "../context/mod.ts";
import { type CallerIdentity, hasScope, type Scope } from "./caller.ts";
import { sessionOwner } from "../session/mod.ts";
import { isLiveState, jobNotFound, jobsFor, type JobView, jobView, pageOf } from "../jobs/mod.ts";

/** Longest wait `job_status` grants: a model waits in long steps, never in a tight loop. */
export const MAX_WAIT_MS = 30_000;
/** Default and largest page of `job_output`, in bytes. */
export const DEFAULT_PAGE_BYTES = 16 * 1024;
export const MAX_PAGE_BYTES = 64 * 1024;

export const JOB_STATUS_DESCRIPTION =
  "State of one of your jobs (from run_command with background: true, a call that ran " +
  "longer than the reply could wait, or a prompted call waiting for the operator's approval: " +
  `awaiting_approval). wait_ms (at most ${MAX_WAIT_MS}) waits for the job to ` +
  "end first, so call it with a long wait instead of polling. Shows the exit status, byte " +
  "counts and the last lines of output (redacted).";
export const JOB_OUTPUT_DESCRIPTION =
  "A page of a job's redacted output: stream stdout or stderr, offset and limit in bytes " +
  `(limit at most ${MAX_PAGE_BYTES}); next_offset says where the next page starts (null at ` +
  "the end). The output is stored when the job ends.";
export const JOB_CANCEL_DESCRIPTION =
  "Stops one of your running jobs: its whole process tree is killed, and the end is recorded. " +
  "A job awaiting its approval is withdrawn instead (nothing runs).";
export const JOB_LIST_DESCRIPTION = "Your jobs, newest first, with their states.";

/** What every job tool answers (snake_case: a wire shape). */
export interface JobReply {
  readonly ok: boolean;
  readonly code: ResultCode;
  readonly reason: string;
  readonly job?: JobView;
  readonly jobs?: readonly JobView[];
  readonly page?: {
    readonly stream: "stdout" | "stderr";
    readonly text: string;
    readonly offset: number;
    readonly next_offset: number | null;
    readonly total_bytes: number;
  };
}

type Access =
  | {
    readonly ok: true;
    readonly owner: string;
    readonly jobs: NonNullable<ReturnType<typeof jobsFor>>;
  }
  | { readonly ok: false; readonly reply: JobReply };

function refuse(code: ResultCode, reason: string): { ok: false; reply: JobReply } {
  return { ok: false, reply: { ok: false, code, reason } };
}

/** The scope check and the store, or the refusal. */
function access(
  context: ServerContext,
  caller: CallerIdentity,
  tool: string,
  scope: Scope,
): Access {
  // The HTTP layer refuses a missing scope first; this is the second check.
  if (!hasScope(caller, scope)) {
    return refuse("SCOPE_DENIED", `This token lacks the "${scope}" scope that ${tool} needs.`);
  }
  const jobs = jobsFor(context);
  if (jobs === null) {
    return refuse("JOB_NOT_FOUND", "This server keeps no jobs: its policy has no state_dir.");
  }
  return { ok: true, owner: sessionOwner(caller.clientId), jobs };
}

/** The job id argument, read once; anything else is answered like an unknown id. */
function jobIdOf(raw: unknown): string | null {
  if (raw === null || typeof raw !== "object") return null;
  const id = (raw as Record<string, unknown>)["job_id"];
  return typeof id === "string" && id.length <= 128 ? id : null;
}

function intArg(raw: unknown, key: string, fallback: number, min: number, max: number): number {
  const value = raw !== null && typeof raw === "object"
    ? (raw as Record<string, unknown>)[key]
    : undefined;
  if (typeof value !== "number" || !Number.isFinite(value)) return fallback;
  return Math.min(max, Math.max(min, Math.floor(value)));
}

const notFound = (id: string | null): JobReply => ({
  ok: false,
  code: "JOB_NOT_FOUND",
  reason: id === null ? "No job of this caller has that id." : jobNotFound(id.slice(0, 64)),
});

/** `job_status(job_id, wait_ms?)`. */
export async function jobStatusTool(
  context: ServerContext,
  caller: CallerIdentity,
  raw: unknown,
): Promise<JobReply> {
  const granted = access(context, caller, "job_status", "shell:read");
  if (!granted.ok) return granted.reply;
  const id = jobIdOf(raw);
  const waitMs = intArg(raw, "wait_ms", 0, 0, MAX_WAIT_MS);
  if (id === null) return notFound(id);
  await granted.jobs.sweep();
  const record = await granted.jobs.waitForEnd(granted.owner, id, waitMs);
  if (record === null) return notFound(id);
  const job = jobView(record, Date.now());
  return { ok: true, code: "OK", reason: stateSentence(job), job };
}

/** `job_output(job_id, stream, offset, limit)`. */
export async function jobOutputTool(
  context: ServerContext,
  caller: CallerIdentity,
  raw: unknown,
): Promise<JobReply> {
  const granted = access(context, caller, "job_output", "shell:read");
  if (!granted.ok) return granted.reply;
  const id = jobIdOf(raw);
  if (id === null) return notFound(id);
  const streamArg = raw !== null && typeof raw === "object"
    ? (raw as Record<string, unknown>)["stream"]
    : undefined;
  const stream = streamArg === "stderr" ? "stderr" : "stdout";
  const offset = intArg(raw, "offset", 0, 0, Number.MAX_SAFE_INTEGER);
  const limit = intArg(raw, "limit", DEFAULT_PAGE_BYTES, 1, MAX_PAGE_BYTES);
  await granted.jobs.sweep();
  const record = await granted.jobs.store.get(granted.owner, id);
  if (record === null) return notFound(id);
  const job = jobView(record, Date.now());
  const output = await granted.jobs.store.output(granted.owner, id);
  if (output === null) {
    const reason = record.state === "running"
      ? "The job is still running; its output is stored when it ends (job_status shows the last lines)."
      : record.state === "awaiting_approval"
      ? "The job waits for its approval; nothing has run yet."
      : "No output was stored for this job.";
    return {
      ok: true,
      code: "OK",
      reason,
      job,
      page: { stream, text: "", offset: 0, next_offset: null, total_bytes: 0 },
    };
  }
  const page = pageOf(output[stream], offset, limit);
  return {
    ok: true,
    code: "OK",
    reason: `Bytes ${page.offset} to ${
      page.offset + new TextEncoder().encode(page.text).byteLength
    } of ${page.totalBytes} of ${stream}.`,
    job,
    page: {
      stream,
      text: page.text,
      offset: page.offset,
      next_offset: page.nextOffset,
      total_bytes: page.totalBytes,
    },
  };
}

/** `job_cancel(job_id)`. */
export async function jobCancelTool(
  context: ServerContext,
  caller: CallerIdentity,
  raw: unknown,
): Promise<JobReply> {
  const granted = access(context, caller, "job_cancel", "shell:execute");
  if (!granted.ok) return granted.reply;
  const id = jobIdOf(raw);
  if (id === null) return notFound(id);
  await granted.jobs.sweep();
  const before = await granted.jobs.store.get(granted.owner, id);
  if (before === null) return notFound(id);
  if (!isLiveState(before.state)) {
    const job = jobView(before, Date.now());
    return { ok: true, code: "OK", reason: `Nothing to cancel: ${stateSentence(job)}`, job };
  }
  const after = await granted.jobs.cancel(granted.owner, caller.clientId, id);
  if (after === null) return notFound(id);
  const job = jobView(after, Date.now());
  return {
    ok: true,
    code: isLiveState(after.state) ? "JOB_RUNNING" : "OK",
    reason: isLiveState(after.state)
      ? "The cancel request is recorded; the server running the job has not confirmed its end yet."
      : `Cancelled: ${stateSentence(job)}`,
    job,
  };
}

/** `job_list()`. */
export async function jobListTool(
  context: ServerContext,
  caller: CallerIdentity,
): Promise<JobReply> {
  const granted = access(context, caller, "job_list", "shell:read");
  if (!granted.ok) return granted.reply;
  await granted.jobs.sweep();
  const now = Date.now();
  const jobs = (await granted.jobs.store.list(granted.owner)).map((r) => jobView(r, now));
  return { ok: true, code: "OK", reason: `${jobs.length} job(s).`, jobs };
}

function stateSentence(job: JobView): string {
  switch (job.state) {
    case "running":
      return `Job ${job.job_id} is running (${job.elapsed_ms} ms so far).`;
    case "awaiting_approval":
      return `Job ${job.job_id} waits for approval ${
        job.approval_id ?? "(unknown)"
      }; nothing has run (${job.elapsed_ms} ms so far).`;
    case "lost":
      return `Job ${job.job_id} is lost: ${job.reason}`;
    case "ended":
      return `Job ${job.job_id} ended with ${job.code}${
        job.exit_code === null ? "" : ` (exit ${job.exit_code})`
      }: ${job.reason}`;
  }
}
