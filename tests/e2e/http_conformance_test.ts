/**
 * The official MCP conformance suite against `htmcp serve --http` (auth off,
 * loopback), started as a real child process under the generated permission
 * set. Needs the suite in DENO_DIR or the npm registry reachable once
 * (`deno cache --no-lock --no-config npm:@modelcontextprotocol/conformance@0.1.16`).
 */
import assert from "node:assert/strict";
import { runConformance, SCENARIOS } from "../../scripts/conformance.ts";

Deno.test("the MCP conformance suite passes the issue's scenarios against htmcp serve --http", async () => {
  const results = await runConformance(SCENARIOS);
  assert.deepEqual(results.map((r) => r.scenario), [...SCENARIOS]);
  for (const result of results) {
    assert.ok(result.ok, `${result.scenario} failed:\n${result.output}`);
    assert.equal(result.failed, 0);
    assert.ok(result.passed >= 1);
  }
});
