/**
 * The conformance suite's `tasks-*` scenarios (the 2026-07-28 Tasks
 * extension, SEP-2663) against `htmcp serve --http`, auth off on loopback,
 * printed check by check. The suite marks them as extension scenarios off
 * the spec timeline, so they run with `--force`. This is a report, not a
 * gate: htmcp does not serve the extension (docs/jobs.md, "MCP Tasks"), and
 * the scenarios need the suite's own fixture tools (`greet`,
 * `slow_compute`, `failing_job`, `protocol_error_job`).
 *
 * Usage: deno run -A scripts/conformance_tasks.ts [--cached-only] [SCENARIO...]
 *
 * @module
 */
import { startCliServer, writeLoopbackPolicy } from "./conformance.ts";
import { CONFORMANCE_2026_PACKAGE } from "./conformance_2026.ts";

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

// deno-lint-ignore no-control-regex
const ANSI = /\x1b\[[0-9;]*m/g;
const CHECK = /\[([a-z0-9-]+)\s*\]\s+(SUCCESS|FAILURE|WARNING)\b/g;

if (import.meta.main) {
  const cachedOnly = Deno.args.includes("--cached-only");
  const named = Deno.args.filter((arg) => !arg.startsWith("--"));
  const dir = await Deno.makeTempDir({ prefix: "htmcp-conformance-tasks-" });
  const server = await startCliServer(await writeLoopbackPolicy(dir));
  try {
    for (const scenario of named.length > 0 ? named : TASK_SCENARIOS) {
      const args = ["run", "-A", "--no-lock", "--no-config"];
      if (cachedOnly) args.push("--cached-only");
      args.push(CONFORMANCE_2026_PACKAGE, "server", "--url", server.url, "--scenario", scenario);
      args.push("--spec-version", "2026-07-28", "--force");
      const out = await new Deno.Command(Deno.execPath(), {
        args,
        stdin: "null",
        env: { NO_COLOR: "1" },
      }).output();
      const text = (new TextDecoder().decode(out.stdout) + new TextDecoder().decode(out.stderr))
        .replace(ANSI, "");
      const checks = [...text.matchAll(CHECK)].map((m) => `${m[1]} ${m[2]}`);
      console.log(`${scenario}:\n  ${checks.length > 0 ? checks.join("\n  ") : "(no checks)"}`);
    }
  } finally {
    server.child.kill("SIGTERM");
    await server.child.status;
    await Deno.remove(dir, { recursive: true });
  }
}
