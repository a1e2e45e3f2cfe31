/**
 * What a log line and a span keep of a call: the code, verdict and exit
 * status from a tool result (never its output), and the arguments redacted.
 */
import assert from "node:assert/strict";
import { outcomeOf, redactedArguments } from "../../src/telemetry/call_record.ts";
import { createRedactor } from "../../src/redact/mod.ts";

const redactor = createRedactor({ enabled: true, entropyFallback: false, extraPatterns: [] });
const TOKEN = "ghp_" + "Zq8x2LmN4pR7tV1wY3bC5dF6gH9jK0sA2eU4";

Deno.test("outcomeOf() classifies ran, refused and failed results; a refusal gets error.type", () => {
  const result = (code: string, isError: boolean, exit: number | null = null) => ({
    ok: true as const,
    value: { isError, structuredContent: { code, exit_code: exit, stdout: "SECRET OUTPUT" } },
  });
  assert.deepEqual(outcomeOf(result("OK", false, 3)), {
    code: "OK",
    verdict: "ok",
    errorType: null,
    exitCode: 3,
  });
  assert.deepEqual(outcomeOf(result("POLICY_DENIED", true)), {
    code: "POLICY_DENIED",
    verdict: "refused",
    errorType: "POLICY_DENIED",
    exitCode: null,
  });
  assert.deepEqual(outcomeOf(result("TIMEOUT", true, null)).verdict, "failed");
  assert.deepEqual(outcomeOf(result("TIMEOUT", true, null)).errorType, "TIMEOUT");
  // explain_command answers a question: its verdict code is not a failed call.
  assert.deepEqual(outcomeOf(result("POLICY_DENIED", false)).verdict, "ok");
  assert.deepEqual(outcomeOf({ ok: true, value: { isError: true, content: [] } }), {
    code: "tool_error",
    verdict: "failed",
    errorType: "tool_error",
    exitCode: null,
  });
  assert.deepEqual(outcomeOf({ ok: true, value: { content: [] } }).code, "OK");
  assert.equal(outcomeOf(result("lower case\nforged", true)).code, "tool_error");
  assert.equal(outcomeOf({ ok: false, error: new TypeError("x") }).errorType, "TypeError");
});

Deno.test("redactedArguments() redacts every string, the argv as a whole, and keeps only stdin's length", () => {
  const text = redactedArguments({
    command: `curl -H "Authorization: Bearer ${TOKEN}" x`,
    argv: ["mysql", "--password", "hunter2-value"],
    stdin: `line with ${TOKEN}`,
    cwd: "src",
    nested: { deep: TOKEN },
    count: 3,
  }, redactor);
  assert.ok(text !== null);
  assert.ok(!text.includes(TOKEN), text);
  assert.ok(!text.includes("hunter2-value"), text);
  const parsed = JSON.parse(text);
  assert.equal(parsed.cwd, "src");
  assert.equal(parsed.stdin, `[${`line with ${TOKEN}`.length} chars]`);
  assert.equal(parsed.nested, "[not shown]");
  assert.equal(parsed.count, 3);
  assert.equal(parsed.argv[0], "mysql");
  assert.equal(redactedArguments(undefined, redactor), null);
});

Deno.test("redactedArguments() never cuts a string before redacting it", () => {
  // The secret straddles the 512-character cut: cut first, its first half would survive.
  const long = "x".repeat(500) + ` ${TOKEN}`;
  const text = redactedArguments({ command: long }, redactor) as string;
  assert.ok(!text.includes(TOKEN.slice(0, 12)), "no half of the secret survives the cut");
  const huge = redactedArguments({ command: "y".repeat(20_000) + TOKEN }, redactor) as string;
  assert.equal(JSON.parse(huge).command, `[${20_000 + TOKEN.length} chars]`);
});
