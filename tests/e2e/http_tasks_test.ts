/**
 * MCP Tasks over HTTP with OAuth and the real SDK v1 client: the shared
 * task script (`_task_script.ts`) for one OAuth client, and a second OAuth
 * client for which that client's running task does not exist (get, result,
 * cancel, list), and whose attempts leave the task running.
 */
import { deepEqual, equal, ok, rejects } from "node:assert/strict";
import { CreateTaskResultSchema } from "@modelcontextprotocol/sdk/types.js";
import { join } from "node:path";
import { verifyAuditChain } from "../../src/audit/mod.ts";
import { harnessPolicy, PIN, serveSandboxed } from "../transport/http/_harness.ts";
import { connectWithOAuth, tokenForClient } from "../transport/http/_oauth.ts";
import { prepareJail } from "../_helpers/jail.ts";
import { procStates } from "../exec/_fixtures.ts";
import { foreignSeesNothing, taskLifecycle } from "./_task_script.ts";

Deno.test("MCP Tasks over HTTP with OAuth: a task is a job of its client only", async () => {
  const dir = await Deno.makeTempDir({ prefix: "htmcp-http-tasks-" });
  await Deno.mkdir(join(dir, "jail"));
  await prepareJail(join(dir, "jail"));
  const base = harnessPolicy(dir, {
    allow: ["sh", "sleep", "echo"],
    limits: { timeoutMs: 20_000 },
  });
  const policy = {
    ...base,
    sandbox: { ...base.sandbox, mode: "bwrap" as const, acceptPathCheckOnly: false },
  };
  const served = await serveSandboxed(policy);
  const url = new URL(`${served.server.url}/mcp`);
  const owner = await connectWithOAuth(url, PIN);
  const other = await connectWithOAuth(url, PIN);
  const records = async () =>
    (await Deno.readTextFile(policy.auditLog)).split("\n").filter((l) => l !== "").map((l) =>
      JSON.parse(l) as Record<string, unknown>
    );
  try {
    const left = await taskLifecycle(owner.client, records);
    await foreignSeesNothing(other.client, left.runningTaskId);
    // The other client's cancel changed nothing: the task still runs, for its owner.
    equal((await owner.client.experimental.tasks.getTask(left.runningTaskId)).status, "working");
    ok((await procStates(left.pids)).every((s) => s !== null), "its processes still run");
    // Scopes: tasks/* are not tool calls, so the store checks the job tools' scopes itself.
    const reader = await connectWithOAuth(url, PIN, "shell:read");
    const runner = await connectWithOAuth(url, PIN, "shell:execute");
    try {
      deepEqual((await reader.client.experimental.tasks.listTasks()).tasks, []);
      // The HTTP layer refuses first (403 insufficient_scope, which the SDK client
      // reports as Unauthorized once it cannot step up), on the current token.
      await rejects(
        runner.client.experimental.tasks.listTasks(),
        /Unauthorized|403|insufficient_scope/,
      );
      await rejects(
        runner.client.experimental.tasks.getTask(left.runningTaskId),
        /Unauthorized|403|insufficient_scope/,
      );
      // The red team's case: a narrower token of the same client, sent on the
      // session a wider one opened, may not cancel (or read) that session's tasks.
      const clientId = owner.provider.clientInformation()?.client_id ?? "";
      const narrow = await tokenForClient(served.server.url, clientId, "shell:read", PIN);
      const cancel = await fetch(url, {
        method: "POST",
        headers: {
          authorization: `Bearer ${narrow}`,
          "content-type": "application/json",
          accept: "application/json, text/event-stream",
          "mcp-session-id": owner.transport.sessionId ?? "",
          "mcp-protocol-version": "2025-11-25",
        },
        body: JSON.stringify({
          jsonrpc: "2.0",
          id: 77,
          method: "tasks/cancel",
          params: { taskId: left.runningTaskId },
        }),
      });
      equal(cancel.status, 403, await cancel.text());
      const denied = (await records()).filter((r) =>
        r.kind === "event" && r.event === "scope_denied" && r.method === "tasks/cancel"
      );
      equal(denied.length, 1);
      // Round six: the same token's notifications/cancelled and DELETE (which
      // cancels the session's calls) are refused too.
      const headers = {
        authorization: `Bearer ${narrow}`,
        "content-type": "application/json",
        accept: "application/json, text/event-stream",
        "mcp-session-id": owner.transport.sessionId ?? "",
        "mcp-protocol-version": "2025-11-25",
      };
      const notified = await fetch(url, {
        method: "POST",
        headers,
        body: JSON.stringify({
          jsonrpc: "2.0",
          method: "notifications/cancelled",
          params: { requestId: 1 },
        }),
      });
      equal(notified.status, 403, await notified.text());
      const ended = await fetch(url, { method: "DELETE", headers });
      equal(ended.status, 403, await ended.text());
      // Round seven: an answer to the server's question (an approval) runs
      // what it approves, so a response needs shell:execute too.
      const answered = await fetch(url, {
        method: "POST",
        headers,
        body: JSON.stringify({ jsonrpc: "2.0", id: 0, result: { action: "accept" } }),
      });
      equal(answered.status, 403, await answered.text());
      // A read-only token cannot start one: the HTTP layer refuses the tool call (403).
      const before = (await records()).filter((r) => r.kind === "attempt").length;
      await rejects(
        reader.client.request(
          {
            method: "tools/call",
            params: { name: "run_command", arguments: { command: "echo no" }, task: {} },
          },
          CreateTaskResultSchema,
        ),
      );
      equal((await records()).filter((r) => r.kind === "attempt").length, before, "nothing ran");
      ok((await records()).some((r) => r.kind === "event" && r.event === "scope_denied"));
    } finally {
      await reader.client.close();
      await runner.client.close();
    }
    equal((await owner.client.experimental.tasks.getTask(left.runningTaskId)).status, "working");
    await left.cancel();
  } finally {
    await owner.client.close();
    await other.client.close();
    await served.close();
  }
  try {
    const report = verifyAuditChain(await Deno.readFile(policy.auditLog));
    ok(report.ok, JSON.stringify(report));
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});
