/**
 * MCP Tasks over stdio with the real SDK v1 client, against a server whose
 * commands run in the kernel sandbox: the shared task script
 * (`_task_script.ts`). The other-caller check needs two callers, which only
 * HTTP with OAuth has (`http_tasks_test.ts`).
 */
import { match } from "node:assert/strict";
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
