/**
 * MCP Tasks over stdio with the real SDK v1 client, against a server whose
 * commands run in the kernel sandbox: the shared task script
 * (`_task_script.ts`). The other-caller check needs two callers, which only
 * HTTP with OAuth has (`http_tasks_test.ts`).
 */
import { equal, match } from "node:assert/strict";
import { startV2Stdio } from "./_v2_clients.ts";
import { startHarness } from "../_helpers/stdio_harness.ts";
import { taskLifecycle } from "./_task_script.ts";

Deno.test("a task-augmented run_command is a job: tasks/get, tasks/result, tasks/list and tasks/cancel over stdio", async () => {
  const dir = await Deno.realPath(await Deno.makeTempDir({ prefix: "htmcp-tasks-" }));
  const h = await startHarness({
    allow: ["sh", "sleep", "echo"],
    topToml: `state_dir = "${dir}/state"`,
    extraToml: "[limits]\ntimeout_ms = 20000",
  });
  try {
    match((await h.describePolicy()).sandbox, /kernel sandbox \(bubblewrap\)/);
    const left = await taskLifecycle(h.client, () => h.records());
    await left.cancel();
  } finally {
    await h.close();
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("a server that keeps no jobs declares no tasks and lists run_command without task support", async () => {
  const h = await startHarness({ allow: ["echo"] });
  try {
    equal(h.client.getServerCapabilities()?.tasks, undefined);
    const run = (await h.client.listTools()).tools.find((t) => t.name === "run_command");
    equal(run?.execution?.taskSupport ?? "forbidden", "forbidden");
  } finally {
    await h.close();
  }
});

Deno.test("a 2026-07-28 client that does not declare the Tasks extension gets no v1 tasks capability, and its call runs as a plain call", async () => {
  const h = await startV2Stdio("2026-07-28", { allow: ["echo"] });
  try {
    equal(h.client.getServerCapabilities()?.tasks, undefined);
    const run = (await h.client.listTools()).tools.find((t) => t.name === "run_command");
    equal((run as { execution?: unknown } | undefined)?.execution, undefined);
    const ran = await h.client.callTool({
      name: "run_command",
      arguments: { command: "echo plain" },
    });
    equal((ran.structuredContent as Record<string, unknown>).code, "OK");
    equal((ran.structuredContent as Record<string, unknown>).stdout, "plain\n");
  } finally {
    await h.close();
  }
});
