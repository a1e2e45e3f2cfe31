/**
 * The pure parts of the Tasks extension module: who negotiated it, and the
 * shapes SEP-2663 gives a created and a detailed task. The wire as a whole
 * is checked by the conformance suite (`tests/e2e/http_conformance_tasks_test.ts`).
 */
import assert from "node:assert/strict";
import type { ServerContext } from "@modelcontextprotocol/server";
import {
  createTaskResult,
  detailedTask,
  negotiatedTasks,
  TASKS_EXTENSION_ID,
  type TaskSnapshot,
} from "../../src/protocol/tasks_extension.ts";

function ctxWith(capabilities: unknown): ServerContext {
  const envelope = { "io.modelcontextprotocol/clientCapabilities": capabilities };
  return { mcpReq: { envelope } } as unknown as ServerContext;
}

const TASK: TaskSnapshot = {
  taskId: "job_a",
  status: "working",
  createdAtMs: Date.UTC(2026, 0, 2, 3, 4, 5, 6),
  lastUpdatedAtMs: Date.UTC(2026, 0, 2, 3, 4, 6, 0),
  ttlMs: 1500.4,
  pollIntervalMs: 999.6,
};

Deno.test("negotiatedTasks() is true only for the extension declared as an object in the request's own capabilities", () => {
  assert.equal(negotiatedTasks(ctxWith({ extensions: { [TASKS_EXTENSION_ID]: {} } })), true);
  for (
    const refused of [
      undefined,
      {},
      { extensions: null },
      { extensions: [] },
      { extensions: { [TASKS_EXTENSION_ID]: true } },
      { extensions: { [TASKS_EXTENSION_ID]: null } },
      { extensions: { "io.modelcontextprotocol/other": {} } },
      // Inherited keys do not count: only the request's own declaration does.
      { extensions: Object.create({ [TASKS_EXTENSION_ID]: {} }) },
      // The v1 capability is not the extension.
      { tasks: { requests: { tools: { call: {} } } } },
    ]
  ) {
    assert.equal(negotiatedTasks(ctxWith(refused)), false, JSON.stringify(refused));
  }
  assert.equal(negotiatedTasks({ mcpReq: {} } as unknown as ServerContext), false);
});

Deno.test("createTaskResult() is flat, with ISO times and integer milliseconds, and nothing that lives on tasks/get", () => {
  const result = createTaskResult({
    ...TASK,
    result: { content: [{ type: "text", text: "x" }] },
    inputRequests: { a: {} },
  }) as Record<string, unknown>;
  assert.deepEqual(result, {
    resultType: "task",
    taskId: "job_a",
    status: "working",
    createdAt: "2026-01-02T03:04:05.006Z",
    lastUpdatedAt: "2026-01-02T03:04:06.000Z",
    ttlMs: 1500,
    pollIntervalMs: 1000,
  });
});

Deno.test("detailedTask() inlines the result only when completed, the error only when failed, without the related-task _meta", () => {
  const result = {
    content: [{ type: "text" as const, text: "done" }],
    _meta: { "io.modelcontextprotocol/related-task": { taskId: "job_a" }, kept: 1 },
  };
  const completed = detailedTask({ ...TASK, status: "completed", result }) as Record<
    string,
    unknown
  >;
  assert.equal(completed.resultType, "complete");
  assert.deepEqual(completed.result, { content: result.content, _meta: { kept: 1 } });
  assert.equal("error" in completed, false);

  const failed = detailedTask({
    ...TASK,
    status: "failed",
    result,
    error: { code: -32603, message: "lost" },
  }) as Record<string, unknown>;
  assert.deepEqual(failed.error, { code: -32603, message: "lost" });
  assert.equal("result" in failed, false);

  const working = detailedTask({ ...TASK, result }) as Record<string, unknown>;
  assert.equal("result" in working, false);
  assert.equal("error" in working, false);
  assert.equal("requestState" in working, false);

  const asking = detailedTask({
    ...TASK,
    status: "input_required",
    inputRequests: { q: { method: "elicitation/create" } },
  }) as Record<string, unknown>;
  assert.deepEqual(asking.inputRequests, { q: { method: "elicitation/create" } });
});
