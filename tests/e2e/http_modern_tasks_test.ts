/**
 * `run_command` as a task of the 2026-07-28 Tasks extension over HTTP with
 * OAuth, raw JSON-RPC (the SDK v2 client has no API for the extension), in
 * the kernel sandbox: the shared script (`_modern_task_script.ts`) for one
 * client; another client, for which that client's task does not exist; the
 * job tools' scopes on the task methods; two servers on one state dir (as
 * replicas, and the 2026 HTTP era builds a server per request anyway) that
 * agree on a task and its cancel; a job whose server died is `failed`.
 *
 * Short clock: `foreground_ms = 1000` stands for the 45 s default.
 */
import { deepEqual, equal, match, ok } from "node:assert/strict";
import { join } from "node:path";
import { verifyAuditChain } from "../../src/audit/mod.ts";
import { JobStore, newJobId } from "../../src/jobs/mod.ts";
import { sessionOwner } from "../../src/session/mod.ts";
import { stateStoreFor } from "../../src/state/mod.ts";
import { harnessPolicy, inKernelSandbox, PIN, serveSandboxed } from "../transport/http/_harness.ts";
import { connectWithOAuth } from "../transport/http/_oauth.ts";
import { prepareJail } from "../_helpers/jail.ts";
import { procStates, uniqueSleep, waitForMarker } from "../exec/_fixtures.ts";
import {
  assertAck,
  assertCreateTaskResult,
  modernTaskLifecycle,
  ok200,
  type Rec,
  rpcAt,
  run,
  settle,
  waitReaped,
} from "./_modern_task_script.ts";

async function start(dir: string, baseUrl: string | null) {
  const policy = inKernelSandbox(harnessPolicy(dir, {
    allow: ["sh", "sleep", "echo"],
    limits: { foregroundMs: 1_000, timeoutMs: 20_000 },
  }));
  const served = await serveSandboxed(policy, baseUrl);
  return { policy, mcpUrl: served.mcpUrl, url: served.server.url, close: served.close };
}

type Served = Awaited<ReturnType<typeof start>>;

async function withTwo(fn: (first: Served, second: Served, dir: string) => Promise<void>) {
  const dir = await Deno.makeTempDir({ prefix: "htmcp-http-modern-tasks-" });
  await Deno.mkdir(join(dir, "jail"));
  await prepareJail(join(dir, "jail"));
  const first = await start(dir, null);
  // The second serves the same resource, as a replica behind one origin would.
  const second = await start(dir, first.url);
  try {
    await fn(first, second, dir);
  } finally {
    await second.close();
    await first.close();
  }
  try {
    const report = verifyAuditChain(await Deno.readFile(first.policy.auditLog));
    ok(report.ok, JSON.stringify(report));
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
}

async function tokenFor(mcpUrl: URL, scope?: string): Promise<string> {
  const connection = await connectWithOAuth(mcpUrl, PIN, scope);
  const token = connection.provider.tokens()?.access_token;
  await connection.close();
  ok(token !== undefined);
  return token;
}

async function records(path: string): Promise<Rec[]> {
  return (await Deno.readTextFile(path)).split("\n").filter((l) => l !== "").map((l) =>
    JSON.parse(l)
  );
}

Deno.test("http 2026-07-28 Tasks: run_command answers tasks per SEP-2663, and another client, a read-only token and the other replica see what they should", async () => {
  await withTwo(async (first, second, dir) => {
    const owner = await tokenFor(first.mcpUrl);
    const rpc = rpcAt(first.mcpUrl, owner);
    const auditLog = first.policy.auditLog;
    await modernTaskLifecycle(
      rpc,
      () => records(auditLog),
      first.policy.limits.jobRetentionMs,
      join(dir, "jail"),
    );

    // A running task of the owner, looked for by everyone else.
    const m = uniqueSleep();
    const taskId = assertCreateTaskResult(
      await run(rpc, { command: `sh -c 'sleep ${m} & sleep ${m}'`, background: true }),
      first.policy.limits.jobRetentionMs,
    );
    const pids = await waitForMarker(m, 2);

    // Another client: the same words as for an id that never existed, and nothing changes.
    const other = rpcAt(first.mcpUrl, await tokenFor(first.mcpUrl));
    for (const id of [taskId, "job_neverExisted0000000000"]) {
      for (const method of ["tasks/get", "tasks/cancel", "tasks/update"]) {
        const reply = await other(method, { taskId: id, inputResponses: {} }, true);
        equal(reply.error?.code, -32602, method);
        equal(reply.error?.message, `Task not found: ${id}`);
        equal(reply.error?.data, undefined);
      }
    }
    equal((await ok200(rpc, "tasks/get", { taskId })).status, "working");
    ok((await procStates(pids)).every((s) => s !== null), "its processes still run");
    // Each probe is audited (the caller is told nothing, the operator everything).
    const probes = (await records(auditLog)).filter((r) =>
      r.event === "task_refused" && r.task_id === taskId && r.reason === "not_found"
    );
    deepEqual(probes.map((r) => r.method).sort(), ["tasks/cancel", "tasks/get", "tasks/update"]);

    // Scopes as for the job tools: reading needs shell:read, cancelling shell:execute.
    const reader = rpcAt(first.mcpUrl, await tokenFor(first.mcpUrl, "shell:read"));
    const executor = rpcAt(first.mcpUrl, await tokenFor(first.mcpUrl, "shell:execute"));
    // (Each token is its own client, so its answer is "not found" once the scope is right.)
    match(
      (await reader("tasks/cancel", { taskId }, true)).error?.message ?? "",
      /lacks the "shell:execute" scope/,
    );
    match(
      (await executor("tasks/get", { taskId }, true)).error?.message ?? "",
      /lacks the "shell:read" scope/,
    );
    equal((await reader("tasks/get", { taskId }, true)).error?.code, -32602);
    const denied = (await records(auditLog)).filter((r) =>
      r.event === "task_refused" && r.task_id === taskId && r.reason === "scope"
    );
    deepEqual(denied.map((r) => [r.method, r.scope]).sort(), [
      ["tasks/cancel", "shell:execute"],
      ["tasks/get", "shell:read"],
    ]);
    // The refused cancel changed nothing.
    equal((await ok200(rpc, "tasks/get", { taskId })).status, "working");
    ok((await procStates(pids)).every((s) => s !== null), "its processes still run");

    // The other replica: the same task, and a cancel there kills the tree here.
    const replica = rpcAt(second.mcpUrl, owner);
    const here = await ok200(rpc, "tasks/get", { taskId });
    const there = await ok200(replica, "tasks/get", { taskId });
    deepEqual(
      [there.taskId, there.status, there.createdAt, there.ttlMs],
      [here.taskId, "working", here.createdAt, here.ttlMs],
    );
    assertAck(await ok200(replica, "tasks/cancel", { taskId }));
    await waitReaped(pids);
    equal((await settle(rpc, taskId)).status, "cancelled");
    equal((await settle(replica, taskId)).status, "cancelled");
    ok(
      (await records(auditLog)).some((r) =>
        r.event === "job_cancel_requested" && r.job_id === taskId && r.via === "state_dir"
      ),
      "the cancel went through the state dir",
    );
  });
});

Deno.test("http 2026-07-28 Tasks: a job whose server died without an outcome is a failed task with an error and no result", async () => {
  await withTwo(async (first) => {
    const rpc = rpcAt(first.mcpUrl, await tokenFor(first.mcpUrl));
    const retention = first.policy.limits.jobRetentionMs;
    const doneId = assertCreateTaskResult(
      await run(rpc, { command: "echo once", background: true }),
      retention,
    );
    equal((await settle(rpc, doneId)).status, "completed");
    // The same job as a server that crashed mid-run leaves it: running, under
    // a writer whose heartbeat is gone (its tree died with it).
    const started = (await records(first.policy.auditLog)).find((r) =>
      r.event === "job_started" && r.job_id === doneId
    );
    const owner = sessionOwner((started?.client_id ?? null) as string | null);
    const store = new JobStore(stateStoreFor(first.policy)!);
    const done = await store.get(owner, doneId);
    ok(done !== null);
    const crashedId = newJobId();
    await store.put({
      ...done,
      id: crashedId,
      state: "running",
      code: null,
      exitCode: null,
      endedMs: null,
      writer: "crashed-server",
      pid: 424242,
    });
    const failed = await settle(rpc, crashedId);
    equal(failed.status, "failed");
    equal("result" in failed, false);
    const error = failed.error as Rec;
    equal(error.code, -32603);
    match(String(error.message), /stopped without recording its end/);
    ok(
      (await records(first.policy.auditLog)).some((r) =>
        r.event === "job_lost" && r.job_id === crashedId
      ),
      "the loss is audited",
    );
  });
});
