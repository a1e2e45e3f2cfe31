/**
 * MCP Tasks on the 2025-11-25 era (SDK v1's experimental tasks): a
 * task-augmented `run_command` call starts a background job, and the SDK's
 * own `tasks/get`, `tasks/result`, `tasks/list` and `tasks/cancel` handlers
 * answer from the job store through `JobTaskStore` (docs/jobs.md).
 *
 * @module
 */
import type { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import type { ServerOptions } from "@modelcontextprotocol/sdk/server/index.js";
import {
  CallToolRequestSchema,
  ErrorCode,
  ListToolsRequestSchema,
  McpError,
} from "@modelcontextprotocol/sdk/types.js";
import { jobsFor } from "../jobs/mod.ts";
import { sessionOwner } from "../session/mod.ts";
import { JobTaskStore, taskOf } from "./job_task_store.ts";
import type { CallerIdentity } from "../tools/caller.ts";
import { runCommandTool } from "../tools/run_command.ts";
import type { ServerContext } from "../context/mod.ts";

/** The one tool a task may run: the one that starts jobs. */
const TASK_TOOL = "run_command";

/**
 * The SDK server options that turn Tasks on: the capability (only what is
 * implemented: list, cancel and task-augmented tools/call) and the store.
 * None without a job store, since a task is a job.
 */
export function taskServerOptions(
  context: ServerContext,
  caller: CallerIdentity,
): Partial<Pick<ServerOptions, "capabilities" | "taskStore">> {
  const jobs = jobsFor(context);
  if (jobs === null) return {};
  const limits = context.policy.limits;
  return {
    capabilities: { tasks: { list: {}, cancel: {}, requests: { tools: { call: {} } } } },
    taskStore: new JobTaskStore(jobs, caller, limits.jobRetentionMs, limits.inlineOutputBytes),
  };
}

type Handler = (request: unknown, extra: unknown) => unknown;
type Extra = { signal: AbortSignal };

function params(request: unknown): Record<string, unknown> {
  const value = (request as { params?: unknown }).params;
  return typeof value === "object" && value !== null ? value as Record<string, unknown> : {};
}

/**
 * Wraps the SDK's `tools/call` and `tools/list` handlers as they are
 * installed (call before the first `registerTool`): a task-augmented call of
 * `run_command` starts a job; one of any other tool is refused, as the spec
 * asks of tools without task support; `tools/list` marks run_command's
 * task support as optional.
 */
export function registerTaskSupport(
  server: McpServer,
  context: ServerContext,
  caller: CallerIdentity,
): void {
  const jobs = jobsFor(context);
  if (jobs === null) return;
  const inner = server.server;
  const install = inner.setRequestHandler.bind(inner) as (schema: unknown, h: Handler) => void;
  inner.setRequestHandler = ((schema: unknown, handler: Handler) => {
    if (schema === CallToolRequestSchema) {
      return install(schema, async (request, extra) => {
        const p = params(request);
        if (p["task"] === undefined) return await handler(request, extra);
        if (p["name"] !== TASK_TOOL) {
          throw new McpError(
            ErrorCode.MethodNotFound,
            `Tool ${String(p["name"])} does not run as a task; only ${TASK_TOOL} does.`,
          );
        }
        return await startTask(context, caller, p["arguments"], (extra as Extra).signal);
      });
    }
    if (schema === ListToolsRequestSchema) {
      return install(schema, async (request, extra) => {
        const listed = await handler(request, extra) as { tools: Record<string, unknown>[] };
        return {
          ...listed,
          tools: listed.tools.map((tool) =>
            tool["name"] === TASK_TOOL ? { ...tool, execution: { taskSupport: "optional" } } : tool
          ),
        };
      });
    }
    return install(schema, handler);
  }) as unknown as typeof inner.setRequestHandler;

  async function startTask(
    context: ServerContext,
    caller: CallerIdentity,
    args: unknown,
    signal: AbortSignal,
  ) {
    // A task is a background job: the same judgement, audit and start as
    // `background: true`, whatever the arguments said about background.
    const raw = typeof args === "object" && args !== null ? args : {};
    const result = await runCommandTool(context, caller, { ...raw, background: true }, signal);
    // A prompted call past approval.wait_ms is a job awaiting its approval:
    // a task as much as a running one.
    const isJob = result.code === "JOB_RUNNING" || result.code === "APPROVAL_PENDING";
    if (!isJob || result.job_id === undefined) {
      // Refused before any job existed: no task, the refusal as the error.
      throw new McpError(ErrorCode.InvalidRequest, `${result.code}: ${result.policy_reason}`, {
        code: result.code,
        policy_reason: result.policy_reason,
      });
    }
    const record = await jobs!.store.get(sessionOwner(caller.clientId), result.job_id);
    if (record === null) {
      throw new McpError(ErrorCode.InternalError, "The job's record is gone.");
    }
    return { task: taskOf(record, context.policy.limits.jobRetentionMs) };
  }
}
