/**
 * One script for `run_command` as a task of the 2026-07-28 Tasks extension
 * (SEP-2663), run over stdio and over HTTP with raw JSON-RPC (the SDK v2
 * client has no API for the extension, and refuses to send `tasks/get` on
 * the 2026 era): one block per MUST of the SEP, each against a real command
 * in the kernel sandbox, with the audit trail and the process table checked.
 *
 * The server's policy must allow `sh`, `sleep` and `echo`, keep jobs (a
 * state store) and have `limits.foreground_ms = 1000`.
 */
import { deepEqual, equal, match, ok } from "node:assert/strict";
import { assertAllReaped, uniqueSleep, waitForMarker } from "../exec/_fixtures.ts";

export type Rec = Record<string, unknown>;

/** A JSON-RPC reply: its result or its error. */
export interface RpcReply {
  readonly result?: Rec;
  readonly error?: { readonly code: number; readonly message: string; readonly data?: unknown };
}

/** Sends one request; `negotiate` declares the Tasks extension in the request's capabilities. */
export type Rpc = (method: string, params: Rec, negotiate: boolean) => Promise<RpcReply>;

export const TASKS = "io.modelcontextprotocol/tasks";

/** The per-request `_meta` of a 2026-07-28 request. */
export function envelope(negotiate: boolean): Rec {
  return {
    "io.modelcontextprotocol/protocolVersion": "2026-07-28",
    "io.modelcontextprotocol/clientInfo": { name: "raw-tasks", version: "1" },
    "io.modelcontextprotocol/clientCapabilities": negotiate ? { extensions: { [TASKS]: {} } } : {},
  };
}

const ISO = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?Z$/;
const TERMINAL = new Set(["completed", "failed", "cancelled"]);

/** The result of a request that must succeed. */
export async function ok200(rpc: Rpc, method: string, params: Rec, negotiate = true) {
  const reply = await rpc(method, params, negotiate);
  if (reply.result === undefined) {
    throw new Error(`${method} failed: ${JSON.stringify(reply.error)}`);
  }
  return reply.result;
}

/** `run_command` as a tools/call. */
export function run(rpc: Rpc, args: Rec, negotiate = true) {
  return ok200(rpc, "tools/call", { name: "run_command", arguments: args }, negotiate);
}

/** Polls tasks/get until the task is terminal. */
export async function settle(rpc: Rpc, taskId: string, timeoutMs = 15_000): Promise<Rec> {
  const deadline = Date.now() + timeoutMs;
  while (true) {
    const task = await ok200(rpc, "tasks/get", { taskId });
    if (TERMINAL.has(String(task.status)) || Date.now() > deadline) return task;
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
}

/** Polls until every pid is gone (the kill is asynchronous to the reply that asked for it). */
export async function waitReaped(pids: readonly number[]): Promise<void> {
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

/** Raw 2026-07-28 JSON-RPC over HTTP with the headers a 2026 client sends. */
export function rpcAt(mcpUrl: URL, token: string | null): Rpc {
  return async (method, params, negotiate) => {
    const name = typeof params.name === "string"
      ? params.name
      : typeof params.taskId === "string"
      ? params.taskId
      : undefined;
    const response = await fetch(mcpUrl, {
      method: "POST",
      headers: {
        "content-type": "application/json",
        accept: "application/json, text/event-stream",
        "mcp-protocol-version": "2026-07-28",
        "mcp-method": method,
        ...(name === undefined ? {} : { "mcp-name": name }),
        ...(token === null ? {} : { authorization: `Bearer ${token}` }),
      },
      body: JSON.stringify({
        jsonrpc: "2.0",
        id: crypto.randomUUID(),
        method,
        params: { ...params, _meta: envelope(negotiate) },
      }),
    });
    const text = await response.text();
    // A tools/call is answered on an event stream: the reply is the data line with an id.
    const messages = text.startsWith("{")
      ? [JSON.parse(text)]
      : [...text.matchAll(/^data: (.*)$/gm)].map((m) => JSON.parse(m[1] as string));
    const reply = messages.find((m) => "id" in m && ("result" in m || "error" in m));
    if (reply === undefined) throw new Error(`no reply to ${method}: ${response.status} ${text}`);
    return reply;
  };
}

/** SEP-2663's flat CreateTaskResult, checked field by field. */
export function assertCreateTaskResult(reply: Rec, retentionMs: number): string {
  equal(reply.resultType, "task");
  match(String(reply.taskId), /^job_[A-Za-z0-9_-]{22}$/);
  equal(reply.status, "working");
  match(String(reply.createdAt), ISO);
  match(String(reply.lastUpdatedAt), ISO);
  equal(reply.ttlMs, retentionMs);
  ok(Number.isInteger(reply.pollIntervalMs) && (reply.pollIntervalMs as number) > 0);
  // Flat: no wrapper, no v1 names, nothing that lives on tasks/get, no MRTR state.
  for (const absent of ["task", "ttl", "pollInterval", "result", "error", "inputRequests"]) {
    equal(absent in reply, false, `CreateTaskResult carries ${absent}`);
  }
  equal(Object.hasOwn(reply, "requestState"), false);
  return reply.taskId as string;
}

/** The acks of tasks/cancel and tasks/update: `resultType: "complete"` and no task fields. */
export function assertAck(reply: Rec): void {
  equal(reply.resultType, "complete");
  deepEqual(Object.keys(reply).filter((k) => k !== "_meta" && k !== "resultType"), []);
}

/** Every MUST of the SEP against run_command, for one caller. */
export async function modernTaskLifecycle(
  rpc: Rpc,
  records: () => Promise<Rec[]>,
  retentionMs: number,
  jail: string,
): Promise<void> {
  // Advertised under capabilities.extensions, never as v1 `capabilities.tasks`.
  const discovered = await ok200(rpc, "server/discover", {}, false);
  const capabilities = discovered.capabilities as Rec;
  deepEqual((capabilities.extensions as Rec)[TASKS], {});
  equal("tasks" in capabilities, false);

  // Not negotiated: every task method is -32021 naming the extension...
  for (
    const [method, params] of [
      ["tasks/get", { taskId: "job_x" }],
      ["tasks/update", { taskId: "job_x", inputResponses: {} }],
      ["tasks/cancel", { taskId: "job_x" }],
    ] as const
  ) {
    const reply = await rpc(method, params, false);
    equal(reply.error?.code, -32021, method);
    deepEqual(reply.error?.data, { requiredCapabilities: { extensions: { [TASKS]: {} } } });
  }
  // ...and a background call is the plain job reply, no task.
  const plain = await run(rpc, { command: "sleep 0.2", background: true }, false);
  equal(plain.resultType, "complete");
  equal("taskId" in plain, false);
  equal((plain.structuredContent as Rec).code, "JOB_RUNNING");

  // Negotiated, background: a flat CreateTaskResult at once, durable before it is sent.
  const created = await run(rpc, {
    command: "sh -c 'echo hello; sleep 1; echo done'",
    background: true,
  });
  const doneId = assertCreateTaskResult(created, retentionMs);
  const early = await ok200(rpc, "tasks/get", { taskId: doneId });
  equal(early.taskId, doneId);
  equal(early.resultType, "complete");
  equal(early.status, "working");
  for (const absent of ["result", "error", "requestState"]) equal(absent in early, false);

  // Completed: tasks/get inlines the tool result, without the v1 related-task _meta.
  const done = await settle(rpc, doneId);
  equal(done.status, "completed");
  equal("error" in done, false);
  equal(Object.hasOwn(done, "requestState"), false);
  const result = done.result as Rec;
  equal(result.isError, false);
  const content = result.structuredContent as Rec;
  equal(content.code, "OK");
  equal(content.stdout, "hello\ndone\n");
  equal(content.job_id, doneId);
  ok(Array.isArray(result.content) && result.content.length > 0);
  equal(((result._meta ?? {}) as Rec)["io.modelcontextprotocol/related-task"], undefined);
  // Still there after it ended (ttlMs is the job retention).
  equal((await ok200(rpc, "tasks/get", { taskId: doneId })).status, "completed");

  // Audit: the attempt before the start, under one call id.
  const all = await records();
  const attemptAt = all.findIndex((r) =>
    r.kind === "attempt" && r.command_raw === "sh -c 'echo hello; sleep 1; echo done'"
  );
  const startedAt = all.findIndex((r) =>
    r.kind === "event" && r.event === "job_started" && r.job_id === doneId
  );
  ok(attemptAt >= 0 && startedAt > attemptAt, "attempt audited before job_started");
  equal(all[startedAt]?.call_id, all[attemptAt]?.call_id);
  equal(all[attemptAt]?.protocol_era, "2026-07-28");
  ok(all.some((r) => r.kind === "event" && r.event === "job_ended" && r.job_id === doneId));

  // A tool error is completed with result.isError, never failed.
  const timedOut = await run(rpc, { command: "sleep 5", background: true, timeout_ms: 300 });
  const timeout = await settle(rpc, assertCreateTaskResult(timedOut, retentionMs));
  equal(timeout.status, "completed");
  equal((timeout.result as Rec).isError, true);
  equal(((timeout.result as Rec).structuredContent as Rec).code, "TIMEOUT");

  // Adaptive: a foreground call still running after foreground_ms becomes a task...
  const m = uniqueSleep();
  const adaptive = await run(rpc, { command: `sh -c 'sleep ${m} & sleep ${m}'` });
  const adaptiveId = assertCreateTaskResult(adaptive, retentionMs);
  ok(
    (await records()).some((r) =>
      r.event === "job_started" && r.job_id === adaptiveId && r.origin === "adaptive"
    ),
  );
  // ...which tasks/cancel kills, tree and all, with an empty ack.
  const pids = await waitForMarker(m, 2);
  assertAck(await ok200(rpc, "tasks/cancel", { taskId: adaptiveId }));
  await waitReaped(pids);
  const cancelled = await settle(rpc, adaptiveId);
  equal(cancelled.status, "cancelled");
  equal("result" in cancelled, false);
  const events = (await records()).filter((r) => r.job_id === adaptiveId);
  ok(events.some((r) => r.event === "job_cancel_requested"), "cancel audited");
  ok(events.some((r) => r.event === "job_ended" && r.result_code === "CANCELLED"));
  // Idempotent on a terminal task; -32602 for an id the server never had.
  assertAck(await ok200(rpc, "tasks/cancel", { taskId: adaptiveId }));
  assertAck(await ok200(rpc, "tasks/cancel", { taskId: doneId }));
  equal((await ok200(rpc, "tasks/get", { taskId: doneId })).status, "completed");
  equal(
    (await rpc("tasks/cancel", { taskId: "job_neverExisted0000000000" }, true)).error?.code,
    -32602,
  );
  equal(
    (await rpc("tasks/get", { taskId: "job_neverExisted0000000000" }, true)).error?.code,
    -32602,
  );
  // tasks/update: an ack (no job waits on input); tasks/list and tasks/result are gone.
  assertAck(await ok200(rpc, "tasks/update", { taskId: doneId, inputResponses: {} }));
  equal((await rpc("tasks/list", {}, true)).error?.code, -32601);
  equal((await rpc("tasks/result", { taskId: doneId }, true)).error?.code, -32601);

  // A fast foreground call is the complete result, no task.
  const quick = await run(rpc, { command: "echo quick" });
  equal(quick.resultType, "complete");
  equal("taskId" in quick, false);
  equal((quick.structuredContent as Rec).stdout, "quick\n");

  // A run refused before anything runs is a plain result with the refusal, no task.
  const canary = `${jail}/canary.txt`;
  await Deno.writeTextFile(canary, "still here");
  const jobsStarted = async () => (await records()).filter((r) => r.event === "job_started").length;
  const startedBefore = await jobsStarted();
  const refused = await run(rpc, { command: "rm -rf .", background: true });
  equal(refused.resultType, "complete");
  equal("taskId" in refused, false);
  equal(refused.isError, true);
  equal((refused.structuredContent as Rec).code, "POLICY_DENIED");
  ok((await records()).some((r) => r.kind === "attempt" && r.command_raw === "rm -rf ."));
  equal(await Deno.readTextFile(canary), "still here");
  equal(await jobsStarted(), startedBefore, "no job started");
}
