/**
 * The official MCP conformance suite's 2026-07-28 scenarios against
 * `htmcp serve --http` (auth off, loopback), under the generated permission
 * set. Needs the suite in DENO_DIR or the npm registry reachable once
 * (`deno cache --no-lock --no-config npm:@modelcontextprotocol/conformance@0.2.0-alpha.12`).
 */
import assert from "node:assert/strict";
import {
  NOT_APPLICABLE_2026,
  runConformance2026,
  SCENARIOS_2026,
  unexpectedFailures,
} from "../../scripts/conformance_2026.ts";

Deno.test("the MCP conformance suite's 2026-07-28 scenarios pass against htmcp serve --http, but for the listed checks that need the suite's own tools", async () => {
  const results = await runConformance2026(SCENARIOS_2026);
  assert.deepEqual(results.map((r) => r.scenario), [...SCENARIOS_2026]);
  for (const result of results) {
    assert.ok(result.checks.length > 0, `${result.scenario} printed no checks:\n${result.output}`);
    assert.ok(
      result.checks.some((check) =>
        check.status === "SUCCESS" && !NOT_APPLICABLE_2026.has(check.check)
      ),
      `${result.scenario} passed nothing of its own`,
    );
    assert.deepEqual(unexpectedFailures(result), [], result.output);
  }
  const stateless = results.find((r) => r.scenario === "server-stateless");
  // The envelope, version and header checks are the heart of the era.
  for (
    const check of [
      "sep-2575-request-meta-invalid-missing-meta",
      "sep-2575-http-server-unsupported-version-400",
    ]
  ) {
    assert.equal(stateless?.checks.find((c) => c.check === check)?.status, "SUCCESS", check);
  }
  const headers = results.find((r) => r.scenario === "http-header-validation");
  assert.ok(headers !== undefined && headers.checks.every((c) => c.status === "SUCCESS"));
});
