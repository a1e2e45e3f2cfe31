/**
 * One MCP Tasks script (2025-11-25, the SDK v1 client's experimental task
 * API) run over stdio and over HTTP: a task-augmented `run_command` is a
 * background job, waited for with `tasks/result`, cancelled with
 * `tasks/cancel` (tree dead, job CANCELLED), listed with `tasks/list`; a
 * refused call creates no task; another caller sees none of it.
 */
import { deepEqual, equal, match, ok, rejects } from "node:assert/strict";
import type { Client } from "@modelcontextprotocol/sdk/client/index.js";
import {
  CallToolResultSchema,
  CreateTaskResultSchema,
  ErrorCode,
  McpError,
} from "@modelcontextprotocol/sdk/types.js";
import { assertAllReaped, uniqueSleep, waitForMarker } from "../exec/_fixtures.ts";

type Rec = Record<string, unknown>;

/** Polls until every pid is gone (the kill is asynchronous to the reply that asked for it). */
async function waitReaped(pids: readonly number[]): Promise<void> {
  const deadline = Date.now() + 5_000;
  while (true) {
    try {
      await assertAllReaped(pids);
      return;
    } catch (error) {
      if (Date.now() > deadline) throw error;
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  }
}

/** Starts a task through the client's task stream and returns the task it was given. */
async function startTask(client: Client, command: string): Promise<Rec> {
  const stream = client.experimental.tasks.callToolStream(
    { name: "run_command", arguments: { command } },
    CallToolResultSchema,
    { task: { ttl: 60_000 }, timeout: 20_000 },
  );
  for await (const message of stream) {
    if (message.type === "taskCreated") return message.task as unknown as Rec;
    throw new Error(`expected taskCreated first, got ${JSON.stringify(message)}`);
  }
  throw new Error("the stream ended without a task");
}

/** Proves the whole task life cycle for one caller; returns a running task's id for the foreign check. */
export async function taskLifecycle(
  client: Client,
  records: () => Promise<Rec[]>,
): Promise<{ runningTaskId: string; pids: number[]; cancel: () => Promise<void> }> {
  // run_command says it may run as a task; no other tool does.
  const listed = await client.listTools();
  const execution = Object.fromEntries(listed.tools.map((t) => [t.name, t.execution]));
  deepEqual(execution["run_command"], { taskSupport: "optional" });
  equal(execution["job_status"]?.taskSupport ?? "forbidden", "forbidden");
  ok(client.getServerCapabilities()?.tasks?.requests?.tools?.call !== undefined);

  // A task that completes: the stream yields the task, then the CommandResult.
  const seen: { type: string; status?: string; result?: Rec }[] = [];
  const stream = client.experimental.tasks.callToolStream(
    { name: "run_command", arguments: { command: "sh -c 'echo hello; sleep 1; echo done'" } },
    CallToolResultSchema,
    { task: { ttl: 60_000 }, timeout: 20_000 },
  );
  for await (const message of stream) {
    if (message.type === "error") throw message.error;
    seen.push({
      type: message.type,
      ...("task" in message ? { status: message.task.status } : {}),
      ...("result" in message ? { result: message.result as Rec } : {}),
    });
  }
  equal(seen[0]?.type, "taskCreated");
  equal(seen[0]?.status, "working");
  const last = seen.at(-1);
  equal(last?.type, "result");
  const done = last?.result?.structuredContent as Rec;
  equal(done.code, "OK");
  equal(done.exit_code, 0);
  equal(done.stdout, "hello\ndone\n");
  const doneId = done.job_id as string;
  match(doneId, /^job_[A-Za-z0-9_-]{22}$/);
  equal((await client.experimental.tasks.getTask(doneId)).status, "completed");
  // The same run is the job the job tools know.
  const status = await client.callTool({ name: "job_status", arguments: { job_id: doneId } });
  equal((status.structuredContent as { job: Rec }).job.code, "OK");

  // Audit: the attempt is written before the job starts, under the same call id.
  const all = await records();
  const attemptAt = all.findIndex((r) =>
    r.kind === "attempt" && r.command_raw === "sh -c 'echo hello; sleep 1; echo done'"
  );
  ok(attemptAt >= 0, "the task's attempt is audited");
  const startedAt = all.findIndex((r) =>
    r.kind === "event" && r.event === "job_started" && r.job_id === doneId
  );
  ok(startedAt > attemptAt, "attempt before start");
  equal(all[startedAt]?.call_id, all[attemptAt]?.call_id);
  equal(all[startedAt]?.origin, "background");

  // A task that is cancelled: working until tasks/cancel, then the tree is gone.
  const m = uniqueSleep();
  const task = await startTask(client, `sh -c 'sleep ${m} & sleep ${m}'`);
  const id = task.taskId as string;
  equal(task.status, "working");
  const pids = await waitForMarker(m, 2);
  equal((await client.experimental.tasks.getTask(id)).status, "working");
  const mine = await client.experimental.tasks.listTasks();
  deepEqual(
    mine.tasks.filter((t) => t.taskId === id || t.taskId === doneId).map((t) => t.status).sort(),
    ["completed", "working"],
  );
  const cancelled = await client.experimental.tasks.cancelTask(id);
  equal(cancelled.status, "cancelled");
  await waitReaped(pids);
  const result = await client.experimental.tasks.getTaskResult(id, CallToolResultSchema);
  equal((result.structuredContent as Rec).code, "CANCELLED");
  await rejects(client.experimental.tasks.cancelTask(id), /terminal status: cancelled/);

  // A refused call creates no task and runs nothing; the refusal is the error.
  const before = (await client.experimental.tasks.listTasks()).tasks.length;
  await rejects(
    client.request(
      {
        method: "tools/call",
        params: { name: "run_command", arguments: { command: "rm -rf ." }, task: {} },
      },
      CreateTaskResultSchema,
    ),
    (error: unknown) =>
      error instanceof McpError && error.code === ErrorCode.InvalidRequest &&
      /-32600: POLICY_DENIED: /.test(error.message) &&
      (error.data as Rec | undefined)?.code === "POLICY_DENIED",
  );
  equal((await client.experimental.tasks.listTasks()).tasks.length, before);
  ok(
    (await records()).some((r) => r.kind === "attempt" && r.command_raw === "rm -rf ."),
    "the refused attempt is audited",
  );
  // A tool that does not run as a task refuses the task form.
  await rejects(
    client.request(
      { method: "tools/call", params: { name: "job_list", arguments: {}, task: {} } },
      CreateTaskResultSchema,
    ),
    (error: unknown) => error instanceof McpError && error.code === ErrorCode.MethodNotFound,
  );

  // One more running task, for the other caller to look for.
  const m2 = uniqueSleep();
  const running = await startTask(client, `sleep ${m2}`);
  const runningPids = await waitForMarker(m2, 1);
  return {
    runningTaskId: running.taskId as string,
    pids: runningPids,
    cancel: async () => {
      equal(
        (await client.experimental.tasks.cancelTask(running.taskId as string)).status,
        "cancelled",
      );
      await waitReaped(runningPids);
    },
  };
}

/** Another caller: the task id is "not found" for every method, and its list is empty. */
export async function foreignSeesNothing(other: Client, taskId: string): Promise<void> {
  const notFound = (error: unknown) =>
    error instanceof McpError && error.code === ErrorCode.InvalidParams &&
    /not found/i.test(error.message) && !error.message.includes("sleep");
  await rejects(other.experimental.tasks.getTask(taskId), notFound);
  await rejects(other.experimental.tasks.cancelTask(taskId), notFound);
  await rejects(other.experimental.tasks.getTaskResult(taskId, CallToolResultSchema), notFound);
  deepEqual((await other.experimental.tasks.listTasks()).tasks, []);
}
