/**
 * The TaskStore adapter over the job store, with a real context and real
 * child processes: status mapping, the scope checks the HTTP layer cannot
 * make for tasks/*, the methods a client may not use, and a lost job's
 * result.
 */
import { deepEqual, equal, match, ok, rejects } from "node:assert/strict";
import { makePolicy, TEST_LIMITS } from "../_helpers/policy.ts";
import { assertSandboxMode, prepareJail } from "../_helpers/jail.ts";
import { createServerContext } from "../../src/server/mod.ts";
import { runCommandTool } from "../../src/tools/run_command.ts";
import type { CallerIdentity } from "../../src/tools/caller.ts";
import { jobsFor } from "../../src/jobs/mod.ts";
import { JobTaskStore } from "../../src/server/job_task_store.ts";

const FULL: CallerIdentity = {
  transport: "http",
  clientId: "client-a",
  scopes: new Set(["shell:read", "shell:execute"]),
};
const READ_ONLY: CallerIdentity = { ...FULL, scopes: new Set(["shell:read"]) };
const OTHER: CallerIdentity = { ...FULL, clientId: "client-b" };

Deno.test("the task store maps jobs to tasks, checks scopes itself and never creates or fills a task", async () => {
  const dir = await Deno.realPath(await Deno.makeTempDir({ prefix: "htmcp-task-store-" }));
  await Deno.mkdir(`${dir}/jail`);
  await prepareJail(`${dir}/jail`);
  const policy = makePolicy({
    jailRoot: `${dir}/jail`,
    auditLog: `${dir}/audit.jsonl`,
    allow: ["sleep", "echo"],
    overrides: { stateDir: `${dir}/state`, limits: { ...TEST_LIMITS, timeoutMs: 20_000 } },
  });
  const built = await createServerContext(policy);
  if (!built.ok) throw new Error(built.message);
  const context = built.context;
  // The adapter sits above the sandbox; this says so rather than pass without it.
  await assertSandboxMode(context.executor, "none");
  const jobs = jobsFor(context);
  if (jobs === null) throw new Error("no job store");
  const store = (caller: CallerIdentity) => new JobTaskStore(jobs, caller, 60_000, 1_024);
  try {
    const started = await runCommandTool(context, FULL, { command: "sleep 30", background: true });
    equal(started.code, "JOB_RUNNING");
    const id = started.job_id as string;

    const task = await store(FULL).getTask(id);
    equal(task?.status, "working");
    equal(task?.ttl, 60_000);
    equal(task?.pollInterval, 1_000);
    equal(await store(OTHER).getTask(id), null, "another caller's task does not exist");
    deepEqual((await store(OTHER).listTasks()).tasks, []);
    await rejects(store(OTHER).updateTaskStatus(id, "cancelled"), /Task not found/);
    await rejects(store(FULL).getTaskResult(id), /still working/);

    // Cancelling kills a tree: a read-only token of the same client may not.
    await rejects(store(READ_ONLY).updateTaskStatus(id, "cancelled"), /"shell:execute" scope/);
    equal((await store(FULL).getTask(id))?.status, "working");
    // A client cannot drive the job's state, create a task or write a result.
    await rejects(store(FULL).updateTaskStatus(id, "completed"), /follows its job's state/);
    await rejects(
      store(FULL).createTask({}, 1, { method: "tools/call", params: {} }),
      /cannot create a task/,
    );
    await rejects(store(FULL).storeTaskResult(id, "completed", {}), /the job's own/);

    await store(FULL).updateTaskStatus(id, "cancelled");
    const cancelled = await store(FULL).getTask(id);
    equal(cancelled?.status, "cancelled");
    const result = await store(FULL).getTaskResult(id) as {
      structuredContent: Record<string, unknown>;
    };
    equal(result.structuredContent.code, "CANCELLED");
    equal(result.structuredContent.job_id, id);

    // A job whose server went away before recording its end: failed, EXECUTOR_ERROR.
    const owner = "client:client-a";
    ok(await jobs.store.get(owner, id) !== null, "the owner key is the sessions' key");
    await jobs.store.update(
      owner,
      id,
      (r) => ({ ...r, state: "lost", code: null, reason: "gone" }),
    );
    equal((await store(FULL).getTask(id))?.status, "failed");
    const lost = await store(FULL).getTaskResult(id) as {
      structuredContent: Record<string, unknown>;
    };
    equal(lost.structuredContent.code, "EXECUTOR_ERROR");
    match(lost.structuredContent.policy_reason as string, /gone/);

    // A run that ended OK completed (whatever its exit status, as its tool
    // result is no error); one that hit its deadline failed.
    const okRun = await runCommandTool(context, FULL, { command: "echo fine", background: true });
    await jobs.waitForEnd(owner, okRun.job_id as string, 10_000);
    equal((await store(FULL).getTask(okRun.job_id as string))?.status, "completed");
    const exit1 = await runCommandTool(context, FULL, { command: "sleep x", background: true });
    await jobs.waitForEnd(owner, exit1.job_id as string, 10_000);
    equal((await store(FULL).getTask(exit1.job_id as string))?.status, "completed");
    const exit1Result = await store(FULL).getTaskResult(exit1.job_id as string) as {
      structuredContent: Record<string, unknown>;
      isError: boolean;
    };
    equal(exit1Result.structuredContent.exit_code, 1);
    equal(exit1Result.isError, false);
    const late = await runCommandTool(context, FULL, {
      command: "sleep 5",
      background: true,
      timeout_ms: 300,
    });
    await jobs.waitForEnd(owner, late.job_id as string, 10_000);
    equal((await store(FULL).getTask(late.job_id as string))?.status, "failed");
    const lateResult = await store(FULL).getTaskResult(late.job_id as string) as {
      structuredContent: Record<string, unknown>;
    };
    equal(lateResult.structuredContent.code, "TIMEOUT");
  } finally {
    await context.close("test done");
    await Deno.remove(dir, { recursive: true });
  }
});
