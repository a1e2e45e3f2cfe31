/**
 * The official MCP conformance suite's 2026-07-28 scenarios
 * (`@modelcontextprotocol/conformance` 0.2.0-alpha) against
 * `htmcp serve --http` with authentication off on loopback, run check by
 * check: every check must pass, except the ones listed in
 * {@linkcode NOT_APPLICABLE_2026}, which need a test tool, prompt or resource
 * of the suite's own that a terminal server does not have. A listed check is
 * accepted only when the suite itself says why it failed (the reason's
 * pattern), so a real failure of such a check is still a failure.
 *
 * Like the 0.1.16 run (`conformance.ts`), the suite is not a project
 * dependency: it runs with `--no-lock --no-config`.
 *
 * Usage: deno run -A scripts/conformance_2026.ts [--cached-only] [SCENARIO...]
 *
 * @module
 */
import { withLoopbackServer } from "./conformance.ts";

/** The suite version with the 2026-07-28 scenarios. */
export const CONFORMANCE_2026_PACKAGE = "npm:@modelcontextprotocol/conformance@0.2.0-alpha.12";

/** The 2026-07-28 scenarios htmcp runs. */
export const SCENARIOS_2026: readonly string[] = Object.freeze([
  "server-stateless",
  "http-header-validation",
  "tools-list",
  "caching",
  "dns-rebinding-protection",
  "server-sse-multiple-streams",
]);

/**
 * Checks that do not apply to htmcp, each with why, and the pattern the
 * suite's own failure message must match for the exemption to hold.
 */
export const NOT_APPLICABLE_2026: ReadonlyMap<string, { reason: string; evidence: RegExp }> =
  new Map([
    ["sep-2575-server-rejects-undeclared-capability", {
      reason:
        "needs the suite's tool test_missing_capability (a tool that samples); htmcp has no tool that needs a client capability",
      evidence: /test_missing_capability/,
    }],
    ["sep-2575-missing-capability-http-400", {
      reason: "the same diagnostic tool test_missing_capability",
      evidence: /test_missing_capability/,
    }],
    ["sep-2549-prompts-list-caching-hints", {
      reason: "htmcp serves no prompts (prompts/list is method-not-found)",
      evidence: /prompts\/list returned JSON-RPC error -32601/,
    }],
    ["sep-2549-resources-list-caching-hints", {
      reason: "htmcp serves no resources",
      evidence: /resources\/list returned JSON-RPC error -32601/,
    }],
    ["sep-2549-resources-templates-list-caching-hints", {
      reason: "htmcp serves no resource templates",
      evidence: /resources\/templates\/list returned JSON-RPC error -32601/,
    }],
  ]);

/** One check of one scenario as the suite printed it. */
export interface CheckResult {
  readonly scenario: string;
  readonly check: string;
  readonly status: "SUCCESS" | "FAILURE" | "WARNING";
}

/** One scenario's checks and the suite's whole output. */
export interface Scenario2026Result {
  readonly scenario: string;
  readonly checks: readonly CheckResult[];
  readonly output: string;
}

const DENO = Deno.execPath();
// deno-lint-ignore no-control-regex
const ANSI = /\x1b\[[0-9;]*m/g;
const CHECK_LINE = /\[([a-z0-9-]+)\s*\]\s+(SUCCESS|FAILURE|WARNING)\b/;

/** Runs one 2026 scenario against `url`. */
export async function runScenario2026(
  url: string,
  scenario: string,
  cachedOnly: boolean,
  force = false,
): Promise<Scenario2026Result> {
  const args = ["run", "-A", "--no-lock", "--no-config"];
  if (cachedOnly) args.push("--cached-only");
  args.push(
    CONFORMANCE_2026_PACKAGE,
    "server",
    "--url",
    url,
    "--scenario",
    scenario,
    "--spec-version",
    "2026-07-28",
  );
  // Extension scenarios (tasks-*) are off the spec timeline: the suite runs them only forced.
  if (force) args.push("--force");
  const out = await new Deno.Command(DENO, {
    args,
    stdin: "null",
    env: { NO_COLOR: "1" },
  }).output();
  const output = (new TextDecoder().decode(out.stdout) + new TextDecoder().decode(out.stderr))
    .replace(ANSI, "");
  const checks: CheckResult[] = [];
  for (const line of output.split("\n")) {
    const match = CHECK_LINE.exec(line);
    if (match === null) continue;
    checks.push({
      scenario,
      check: match[1] as string,
      status: match[2] as CheckResult["status"],
    });
  }
  return { scenario, checks, output };
}

/** The checks that failed and are not exempt (with evidence) as not applicable. */
export function unexpectedFailures(result: Scenario2026Result): string[] {
  return result.checks.filter((check) => check.status === "FAILURE").filter((check) => {
    const exempt = NOT_APPLICABLE_2026.get(check.check);
    return exempt === undefined || !exempt.evidence.test(result.output);
  }).map((check) => `${result.scenario}/${check.check}`);
}

/** Starts the server, runs `scenarios`, stops the server. */
export async function runConformance2026(
  scenarios: readonly string[] = SCENARIOS_2026,
  cachedOnly = false,
): Promise<Scenario2026Result[]> {
  return await withLoopbackServer("htmcp-conformance-2026-", async (url) => {
    const results: Scenario2026Result[] = [];
    for (const scenario of scenarios) {
      results.push(await runScenario2026(url, scenario, cachedOnly));
    }
    return results;
  });
}

if (import.meta.main) {
  const cachedOnly = Deno.args.includes("--cached-only");
  const named = Deno.args.filter((arg) => !arg.startsWith("--"));
  const results = await runConformance2026(named.length > 0 ? named : SCENARIOS_2026, cachedOnly);
  let bad = 0;
  for (const result of results) {
    const unexpected = unexpectedFailures(result);
    const passed = result.checks.filter((check) => check.status === "SUCCESS").length;
    console.log(
      `${result.scenario}: ${passed}/${result.checks.length} checks passed` +
        (unexpected.length > 0 ? `; FAILED: ${unexpected.join(", ")}` : ""),
    );
    bad += unexpected.length + (result.checks.length === 0 ? 1 : 0);
  }
  Deno.exit(bad === 0 ? 0 : 1);
}
