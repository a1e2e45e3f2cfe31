/**
 * The conformance suite's `tasks-*` scenarios (the 2026-07-28 Tasks
 * extension, SEP-2663) against `htmcp serve --http`, auth off on loopback,
 * printed check by check. The suite marks them as extension scenarios off
 * the spec timeline, so they run with `--force`. This is a report, not a
 * gate: htmcp serves the extension for `run_command`, but the scenarios call
 * the suite's own fixture tools (`greet`, `slow_compute`, `failing_job`,
 * `protocol_error_job`, ...), which a terminal server does not have; the
 * gate is `tests/e2e/http_conformance_tasks_test.ts`, which runs them
 * against a fixture server mounting the same extension module.
 *
 * Usage: deno run -A scripts/conformance_tasks.ts [--cached-only] [SCENARIO...]
 *
 * @module
 */
import { startCliServer, writeLoopbackPolicy } from "./conformance.ts";
import { runScenario2026 } from "./conformance_2026.ts";

/** Every `tasks-*` scenario of the suite version. */
export const TASK_SCENARIOS: readonly string[] = Object.freeze([
  "tasks-lifecycle",
  "tasks-capability-negotiation",
  "tasks-wire-fields",
  "tasks-request-state-removal",
  "tasks-mrtr-input",
  "tasks-request-headers",
  "tasks-dispatch-and-envelope",
  "tasks-status-notifications",
  "tasks-required-task-error",
  "tasks-mrtr-composition",
]);

if (import.meta.main) {
  const cachedOnly = Deno.args.includes("--cached-only");
  const named = Deno.args.filter((arg) => !arg.startsWith("--"));
  const dir = await Deno.makeTempDir({ prefix: "htmcp-conformance-tasks-" });
  const server = await startCliServer(await writeLoopbackPolicy(dir));
  try {
    for (const scenario of named.length > 0 ? named : TASK_SCENARIOS) {
      const result = await runScenario2026(server.url, scenario, cachedOnly, true);
      const checks = result.checks.map((c) => `${c.check} ${c.status}`);
      console.log(`${scenario}:\n  ${checks.length > 0 ? checks.join("\n  ") : "(no checks)"}`);
    }
  } finally {
    server.child.kill("SIGTERM");
    await server.child.status;
    await Deno.remove(dir, { recursive: true });
  }
}
