/**
 * MCP Tasks (2025-11-25, experimental) as a view of the job store: the SDK's
 * `TaskStore` interface answered from `JobStore`/`JobManager`, so a task *is*
 * a job (one store, one owner rule, one audit trail; docs/jobs.md).
 *
 * Tasks are never created through this store: only `run_command`, judged and
 * audited like `background: true`, starts a job. Nor does anyone but the job
 * itself set a result. The store is bound to one caller (one SDK server
 * serves one caller), so the SDK's session id is not needed to tell owners
 * apart, and another caller's task id answers "not found" like its job id.
 *
 * @module
 */
import type {
  CreateTaskOptions,
  TaskStore,
} from "@modelcontextprotocol/sdk/experimental/tasks/interfaces.js";
import {
  type CallToolResult,
  ErrorCode,
  McpError,
  type Request,
  type RequestId,
  type Result,
  type Task,
} from "@modelcontextprotocol/sdk/types.js";
import { headAndTail, isLiveState, type JobManager, type JobRecord } from "../jobs/mod.ts";
import { type CallerIdentity, hasScope, type Scope } from "../tools/caller.ts";
import { sessionOwner } from "../session/mod.ts";
import type { CommandResult } from "../result/codes.ts";
import { makeResult, toToolResult } from "../tools/envelope.ts";

/** How often a client is told to poll `tasks/get` (the SDK's `tasks/result` waits at this pace too). */
export const TASK_POLL_MS = 1_000;

/** The task status of a job: a run that ended `OK` completed, `CANCELLED` was cancelled, anything else failed. */
export function taskStatus(record: JobRecord): Task["status"] {
  // Awaiting its approval is "working" too: the input it waits for comes
  // from the operator, never from this client (statusMessage says so).
  if (isLiveState(record.state)) return "working";
  if (record.state === "lost") return "failed";
  if (record.code === "CANCELLED") return "cancelled";
  return record.code === "OK" || record.code === "OUTPUT_TRUNCATED" ? "completed" : "failed";
}

/** The task view of a job record. */
export function taskOf(record: JobRecord, retentionMs: number): Task {
  return {
    taskId: record.id,
    status: taskStatus(record),
    // A job (and so its task) is deleted retention after it ends.
    ttl: retentionMs,
    createdAt: new Date(record.startedMs).toISOString(),
    lastUpdatedAt: new Date(record.endedMs ?? record.startedMs).toISOString(),
    pollInterval: TASK_POLL_MS,
    ...(record.reason === "" ? {} : { statusMessage: record.reason }),
  };
}

function notFound(id: string): McpError {
  // Same words for absent, expired and another caller's: nothing is revealed.
  return new McpError(ErrorCode.InvalidParams, `Task not found: ${id}`);
}

export class JobTaskStore implements TaskStore {
  readonly #jobs: JobManager;
  readonly #caller: CallerIdentity;
  readonly #owner: string;
  readonly #retentionMs: number;
  readonly #inlineBytes: number;

  /**
   * @param jobs The server's job manager.
   * @param caller The one caller this store answers (its owner key and scopes).
   * @param retentionMs `limits.job_retention_s` in ms.
   * @param inlineBytes `limits.inline_output_bytes`: the result keeps head and tail within it.
   */
  constructor(
    jobs: JobManager,
    caller: CallerIdentity,
    retentionMs: number,
    inlineBytes: number,
  ) {
    this.#jobs = jobs;
    this.#caller = caller;
    this.#owner = sessionOwner(caller.clientId);
    this.#retentionMs = retentionMs;
    this.#inlineBytes = inlineBytes;
  }

  /**
   * The tasks methods are not tool calls, so the HTTP layer's per-tool scope
   * check never sees them: the same scopes as the job tools are checked here
   * (reading needs shell:read, cancelling, which kills a tree, shell:execute).
   */
  #need(scope: Scope): void {
    if (!hasScope(this.#caller, scope)) {
      throw new McpError(ErrorCode.InvalidRequest, `This token lacks the "${scope}" scope.`);
    }
  }

  createTask(
    _params: CreateTaskOptions,
    _requestId: RequestId,
    request: Request,
  ): Promise<Task> {
    // A task is a job, and a job starts only through run_command's checks.
    return Promise.reject(
      new McpError(ErrorCode.InvalidRequest, `${request.method} cannot create a task here.`),
    );
  }

  async getTask(taskId: string): Promise<Task | null> {
    this.#need("shell:read");
    await this.#jobs.sweep();
    const record = await this.#jobs.store.get(this.#owner, taskId);
    return record === null ? null : taskOf(record, this.#retentionMs);
  }

  storeTaskResult(
    taskId: string,
    _status: "completed" | "failed",
    _result: Result,
  ): Promise<void> {
    // Only the job's own end writes its result; a client cannot forge one.
    return Promise.reject(
      new McpError(ErrorCode.InvalidRequest, `The result of task ${taskId} is the job's own.`),
    );
  }

  async getTaskResult(taskId: string): Promise<Result> {
    this.#need("shell:read");
    const record = await this.#jobs.store.get(this.#owner, taskId);
    if (record === null) throw notFound(taskId);
    if (isLiveState(record.state)) {
      throw new McpError(ErrorCode.InvalidRequest, `Task ${taskId} is still working.`);
    }
    const output = await this.#jobs.store.output(this.#owner, taskId);
    return endedJobResult(record, output?.stdout ?? "", output?.stderr ?? "", this.#inlineBytes);
  }

  async updateTaskStatus(taskId: string, status: Task["status"]): Promise<void> {
    // The one status a client may ask for is cancelled (tasks/cancel); the
    // others follow the job's own run.
    if (status !== "cancelled") {
      throw new McpError(ErrorCode.InvalidRequest, `Task ${taskId} follows its job's state.`);
    }
    this.#need("shell:execute");
    const after = await this.#jobs.cancel(this.#owner, this.#caller.clientId, taskId);
    if (after === null) throw notFound(taskId);
  }

  async listTasks(): Promise<{ tasks: Task[]; nextCursor?: string }> {
    this.#need("shell:read");
    await this.#jobs.sweep();
    const records = await this.#jobs.store.list(this.#owner);
    return { tasks: records.map((r) => taskOf(r, this.#retentionMs)) };
  }
}

/**
 * The CommandResult envelope of an ended job, output cut like a foreground
 * reply (each stream's head and tail within `inlineBytes`).
 */
export function endedJobResult(
  record: JobRecord,
  stdout: string,
  stderr: string,
  inlineBytes: number,
): CallToolResult {
  const hint = (stream: "stdout" | "stderr") => (offset: number, length: number) =>
    `read them with job_output(job_id="${record.id}", stream="${stream}", offset=${offset}, limit=${length})`;
  const elapsedMs = (record.endedMs ?? Date.now()) - record.startedMs;
  // A lost job never recorded an outcome: the server running it went away.
  const code = record.code ?? "EXECUTOR_ERROR";
  const result: CommandResult = makeResult(code, {
    policyReason: record.reason,
    startedAt: performance.now() - elapsedMs,
    stdout: headAndTail(stdout, inlineBytes, hint("stdout")).text,
    stderr: headAndTail(stderr, inlineBytes, hint("stderr")).text,
    exitCode: record.exitCode,
    jobId: record.id,
  });
  return toToolResult(result);
}
