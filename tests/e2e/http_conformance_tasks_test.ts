/**
 * The official MCP conformance suite's `tasks-*` scenarios (SEP-2663, the
 * 2026-07-28 Tasks extension; `@modelcontextprotocol/conformance`
 * 0.2.0-alpha.12, forced, as the suite files extension scenarios off the
 * spec timeline) against a test-only fixture server that mounts htmcp's own
 * extension module with the suite's fixture tools (`_tasks_fixture.ts`).
 * This proves the module's wire with the real suite; `run_command` is served
 * through the same module, and its own tests are in `*_modern_tasks_test.ts`.
 * Needs the suite in DENO_DIR or the npm registry reachable once.
 */
import assert from "node:assert/strict";
import { runScenario2026 } from "../../scripts/conformance_2026.ts";
import { TASK_SCENARIOS } from "../../scripts/conformance_tasks.ts";
import { serveFixture } from "./_tasks_fixture.ts";

/** The one scenario the suite itself skips (its harness awaits a rewrite). */
const SKIPPED_BY_SUITE = "tasks-status-notifications";

Deno.test("every check of the conformance suite's tasks-* scenarios passes against the Tasks extension module", async () => {
  const fixture = serveFixture();
  try {
    for (const scenario of TASK_SCENARIOS) {
      const result = await runScenario2026(fixture.url, scenario, false, true);
      if (scenario === SKIPPED_BY_SUITE) {
        assert.match(result.output, /SKIPPED/, result.output);
        continue;
      }
      // Each scenario checks the extension itself, not just the wire schema.
      assert.ok(
        result.checks.some((c) => c.check !== "wire-schema-valid"),
        `${scenario} printed no checks of its own:\n${result.output}`,
      );
      const bad = result.checks.filter((c) => c.status !== "SUCCESS");
      assert.deepEqual(bad, [], `${scenario}:\n${result.output}`);
    }
  } finally {
    await fixture.close();
  }
});
