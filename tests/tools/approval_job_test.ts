/**
 * The awaiting-approval job inside one server process (real context, real
 * state dir, real child processes): an approval that does not bind the
 * running policy never starts the job, and a cancel request another server
 * wrote into the record withdraws it. Both end with nothing run.
 */
import { equal, match, ok } from "node:assert/strict";
import { makePolicy, TEST_LIMITS } from "../_helpers/policy.ts";
import { assertSandboxMode, prepareJail } from "../_helpers/jail.ts";
import { exists } from "../_helpers/exists.ts";
import { createServerContext, type ServerContext } from "../../src/server/mod.ts";
import { runCommandTool } from "../../src/tools/run_command.ts";
import type { CallerIdentity } from "../../src/tools/caller.ts";
import { jobsFor } from "../../src/jobs/mod.ts";
import { ApprovalStore } from "../../src/approvals/mod.ts";
import { LocalStateStore } from "../../src/state/mod.ts";
import { JobTaskStore } from "../../src/server/job_task_store.ts";

const CALLER: CallerIdentity = {
  transport: "http",
  clientId: "client-a",
  scopes: new Set(["shell:read", "shell:execute"]),
};
const OWNER = "client:client-a";

async function withServer(
  fn: (context: ServerContext, dir: string, operator: LocalStateStore) => Promise<void>,
): Promise<void> {
  const dir = await Deno.realPath(await Deno.makeTempDir({ prefix: "htmcp-approval-job-" }));
  await Deno.mkdir(`${dir}/jail`);
  await prepareJail(`${dir}/jail`);
  const policy = makePolicy({
    jailRoot: `${dir}/jail`,
    auditLog: `${dir}/audit.jsonl`,
    allow: ["touch"],
    overrides: {
      stateDir: `${dir}/state`,
      limits: TEST_LIMITS,
      rules: [{
        command: "touch",
        denyArgs: ["canary.txt"],
        reason: "a risky command",
        enforce: "deny",
        decision: "prompt",
        justification: "a risky command",
      }],
      approval: { ttlMs: 60_000, waitMs: 100, require: "operator" },
    },
  });
  const built = await createServerContext(policy);
  if (!built.ok) throw new Error(built.message);
  // These are layer-1 checks above the sandbox; this says so rather than pass without it.
  await assertSandboxMode(built.context.executor, "none");
  const operator = new LocalStateStore(`${dir}/state`);
  try {
    await fn(built.context, dir, operator);
  } finally {
    await operator.close();
    await built.context.close("test finished");
    await Deno.remove(dir, { recursive: true });
  }
}

async function audit(dir: string): Promise<Record<string, unknown>[]> {
  return (await Deno.readTextFile(`${dir}/audit.jsonl`)).split("\n").filter((l) => l !== "")
    .map((l) => JSON.parse(l));
}

Deno.test("an allowed approval made under another policy hash never starts the awaiting job", async () => {
  await withServer(async (context, dir, operator) => {
    const pending = await runCommandTool(context, CALLER, { command: "touch canary.txt" });
    equal(pending.code, "APPROVAL_PENDING");
    const id = pending.approval_id as string;
    // The record says another policy approved it: it must not bind this one.
    await operator.update("approvals", id, (record) => ({
      next: {
        ...(record as Record<string, unknown>),
        policy_hash: "sha256:another-policy",
        state: "allowed",
        answered_by: "cli:test",
        answered_ms: Date.now(),
      },
      result: null,
    }));
    const jobs = jobsFor(context)!;
    const ended = await jobs.waitForEnd(OWNER, pending.job_id as string, 10_000);
    equal(ended?.state, "ended");
    equal(ended?.code, "APPROVAL_EXPIRED");
    match(ended?.reason ?? "", /another policy/);
    equal(await exists(`${dir}/jail/canary.txt`), false);
    equal((await new ApprovalStore(operator).get(id))?.state, "expired");
    const records = await audit(dir);
    equal(records.some((r) => r.kind === "attempt" && r.verdict === "allow"), false);
    ok(records.some((r) => r.kind === "attempt" && r.code === "APPROVAL_EXPIRED"));
  });
});

Deno.test("a cancel request another server records withdraws the awaiting job", async () => {
  await withServer(async (context, dir, operator) => {
    const pending = await runCommandTool(context, CALLER, { command: "touch canary.txt" });
    equal(pending.code, "APPROVAL_PENDING");
    const jobId = pending.job_id as string;
    // As a task it is working: the input it waits for is the operator's.
    const task = await new JobTaskStore(jobsFor(context)!, CALLER, 60_000, 1_024).getTask(jobId);
    equal(task?.status, "working");
    match(task?.statusMessage ?? "", new RegExp(`approval ${pending.approval_id}`));
    await operator.update("jobs", jobId, (record) => ({
      next: { ...(record as Record<string, unknown>), cancelRequestedMs: Date.now() },
      result: null,
    }));
    const ended = await jobsFor(context)!.waitForEnd(OWNER, jobId, 10_000);
    equal(ended?.code, "CANCELLED");
    equal(
      (await new ApprovalStore(operator).get(pending.approval_id as string))?.state,
      "withdrawn",
    );
    // The operator's answer comes too late: nothing runs.
    const late = await new ApprovalStore(operator).answer(
      pending.approval_id as string,
      true,
      "cli:test",
    );
    equal(late.ok, false);
    equal(await exists(`${dir}/jail/canary.txt`), false);
  });
});

Deno.test("an identical call after the awaiting job was lost withdraws its approval and asks anew", async () => {
  await withServer(async (context, dir, operator) => {
    const first = await runCommandTool(context, CALLER, { command: "touch canary.txt" });
    equal(first.code, "APPROVAL_PENDING");
    // As if its server had crashed: the record names a server that no longer beats.
    await operator.update("jobs", first.job_id as string, (record) => ({
      next: { ...(record as Record<string, unknown>), writer: "a-crashed-server" },
      result: null,
    }));
    const second = await runCommandTool(context, CALLER, { command: "touch canary.txt" });
    equal(second.code, "APPROVAL_PENDING");
    ok(second.approval_id !== first.approval_id, "a new request, not the lost job's");
    ok(second.job_id !== first.job_id);
    const approvals = new ApprovalStore(operator);
    equal((await approvals.get(first.approval_id as string))?.state, "withdrawn");
    equal((await approvals.get(second.approval_id as string))?.state, "pending");
    equal(await exists(`${dir}/jail/canary.txt`), false);
  });
});
