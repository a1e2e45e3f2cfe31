/**
 * htmcp's {@link TaskRunner} for the 2026-07-28 Tasks extension: a task is a
 * job (docs/jobs.md), so it has the job store's owner rule, durability,
 * cross-replica cancel and audit trail, and nothing of its own to keep.
 *
 * `run_command` is the one task-supporting tool, and it never starts a task
 * by a path of its own: the call runs through the same 2025 tool as every
 * other call (judged, audited, started), and only when its reply is
 * `JOB_RUNNING` (asked for with `background: true`, or a foreground call
 * that outlived `limits.foreground_ms`) is that job answered as a task. A
 * refusal, or a command that ended in time, stays a plain result.
 *
 * The runner serves one caller (the 2026 face builds one per request or
 * connection): another caller's job id is "not found", revealing nothing.
 * `tasks/*` are not tool calls, so the job tools' scopes are checked here.
 *
 * @module
 */
import { type CallToolResult, ProtocolError } from "@modelcontextprotocol/server";
import type { AuditLog } from "../audit/mod.ts";
import type { JobManager, JobRecord } from "../jobs/mod.ts";
import { endedJobResult, TASK_POLL_MS } from "../server/job_task_store.ts";
import { sessionOwner } from "../session/mod.ts";
import { type CallerIdentity, hasScope, type Scope } from "../tools/caller.ts";
import type { TaskRunner, TaskSnapshot, TaskStatus } from "./tasks_extension.ts";

declare module "../audit/mod.ts" {
  interface AuditEventFields {
    /**
     * A task method refused for its caller: a missing scope, or a task id
     * the caller has no task by (absent, expired, or another caller's: an
     * operator sees probing for ids that the caller is never told about).
     */
    task_refused: {
      readonly protocol_era: string;
      readonly transport: string;
      readonly client_id: string | null;
      readonly method: string;
      readonly task_id: string;
      readonly reason: "scope" | "not_found";
      readonly scope: string | null;
    };
  }
}

/** The one tool that may become a task: the one that starts jobs. */
export const TASK_TOOL = "run_command";

/** What the runner needs of the server. */
export interface JobTaskOptions {
  readonly jobs: JobManager;
  readonly caller: CallerIdentity;
  /** Where refusals of the task methods are recorded. */
  readonly audit: AuditLog;
  /** `limits.job_retention_s` in ms: an ended job (and task) is kept this long. */
  readonly retentionMs: number;
  /** `limits.inline_output_bytes`: an inlined result keeps head and tail within it. */
  readonly inlineBytes: number;
}

/**
 * The task status of a job. Any ended run is `completed` with the tool
 * result a foreground call would have had (a non-OK code is `isError`):
 * SEP-2663 keeps `failed` for protocol errors, and a run that timed out or
 * exited non-zero is a tool outcome. `CANCELLED` is `cancelled`; a `lost`
 * job, whose server stopped without an outcome, has no result at all and
 * is `failed`.
 */
export function jobTaskStatus(record: JobRecord): TaskStatus {
  // A job state this module does not know (a newer server's, or one that
  // waits for a human's out-of-band approval) reads as still working, its
  // reason as the status message: it is never shown as ended with a result
  // it lacks. `input_required` is for input the client itself can give: a
  // job that waited on the client would map to it here, with its requests
  // in the snapshot's `inputRequests` and their answers taken by `update`.
  if (record.state === "lost") return "failed";
  if (record.state !== "ended") return "working";
  return record.code === "CANCELLED" ? "cancelled" : "completed";
}

/** Builds the runner for one caller. */
export function jobTaskRunner(options: JobTaskOptions): TaskRunner {
  const { jobs, caller } = options;
  const owner = sessionOwner(caller.clientId);
  const refuse = (method: string, taskId: string, scope: Scope | null) =>
    options.audit.writeEvent("task_refused", {
      protocol_era: "2026-07-28",
      transport: caller.transport,
      client_id: caller.clientId,
      method,
      // The id is the client's string: bounded here, as nothing else bounds it.
      task_id: taskId.slice(0, 128),
      reason: scope === null ? "not_found" : "scope",
      scope,
    });
  const need = async (method: string, taskId: string, scope: Scope) => {
    if (!hasScope(caller, scope)) {
      await refuse(method, taskId, scope);
      throw new ProtocolError(-32600, `This token lacks the "${scope}" scope.`);
    }
  };
  /** The caller's job, or null (audited) when it has none by that id. */
  const mine = async (method: string, taskId: string) => {
    const record = await jobs.store.get(owner, taskId);
    if (record === null) await refuse(method, taskId, null);
    return record;
  };

  const snapshot = async (record: JobRecord): Promise<TaskSnapshot> => {
    const status = jobTaskStatus(record);
    const base = {
      taskId: record.id,
      status,
      createdAtMs: record.startedMs,
      lastUpdatedAtMs: record.endedMs ?? record.startedMs,
      ttlMs: options.retentionMs,
      pollIntervalMs: TASK_POLL_MS,
      ...(record.reason === "" ? {} : { statusMessage: record.reason }),
    };
    if (status === "completed") {
      const output = await jobs.store.output(owner, record.id);
      const result = endedJobResult(
        record,
        output?.stdout ?? "",
        output?.stderr ?? "",
        options.inlineBytes,
      ) as unknown as CallToolResult;
      return { ...base, result };
    }
    if (status === "failed") {
      return {
        ...base,
        error: {
          code: -32603,
          message: record.reason === "" ? "The job was lost." : record.reason,
          data: { code: "EXECUTOR_ERROR", job_id: record.id },
        },
      };
    }
    return base;
  };

  return {
    taskSupport: (tool) => tool === TASK_TOOL ? "optional" : undefined,

    async call(_call, _ctx, plain) {
      // The plain call is judged, audited and started like any other; its
      // reply says whether a job outlives it.
      const result = await plain();
      const content = result.structuredContent as Record<string, unknown> | undefined;
      const jobId = content?.["job_id"];
      if (content?.["code"] !== "JOB_RUNNING" || typeof jobId !== "string") {
        return { kind: "complete", result };
      }
      const record = await jobs.store.get(owner, jobId);
      // The record was written before the reply (the store is durable), so
      // a tasks/get sent at once finds it; if it is gone, the plain reply
      // still names the job.
      if (record === null) return { kind: "complete", result };
      return { kind: "task", task: await snapshot(record) };
    },

    async get(taskId) {
      await need("tasks/get", taskId, "shell:read");
      await jobs.sweep();
      const record = await mine("tasks/get", taskId);
      return record === null ? null : await snapshot(record);
    },

    async cancel(taskId) {
      // Cancelling kills a process tree: the scope that starts one.
      await need("tasks/cancel", taskId, "shell:execute");
      const record = await mine("tasks/cancel", taskId);
      if (record === null) return false;
      // Whatever has not ended is cancelled (a job state newer than this
      // module included); an ended task stays as it ended.
      if (record.state !== "ended" && record.state !== "lost") {
        await jobs.cancel(owner, caller.clientId, taskId);
      }
      return true;
    },

    async update(taskId) {
      await need("tasks/update", taskId, "shell:execute");
      // No job waits on client input yet: responses to requests that are
      // not outstanding are ignored, as SEP-2663 lets a server do.
      return (await mine("tasks/update", taskId)) !== null;
    },
  };
}
