/**
 * The logger's two formats and its level filter. A field can never forge a
 * second line or a second field, in either format.
 */
import assert from "node:assert/strict";
import { createLogger } from "../../src/telemetry/log.ts";

const AT = () => new Date("2026-12-01T22:30:00.000Z");

function capture(format: "text" | "json", level: "debug" | "info" | "warn" | "error" = "info") {
  const lines: string[] = [];
  return { lines, log: createLogger({ format, level }, (line) => lines.push(line), AT) };
}

Deno.test("json lines carry time, level, event and msg first, then the fields, undefined left out", () => {
  const { lines, log } = capture("json");
  log.write("info", "tool_call", "tools/call run_command: OK", {
    tool: "run_command",
    exit: 0,
    client_id: null,
    session_id: undefined,
    level: "forged",
  });
  assert.equal(lines.length, 1);
  assert.equal(
    lines[0],
    '{"time":"2026-12-01T22:30:00.000Z","level":"info","event":"tool_call","msg":"tools/call run_command: OK","tool":"run_command","exit":0,"client_id":null}',
  );
});

Deno.test("text lines read as the CLI always did, and quote values that could break them", () => {
  const { lines, log } = capture("text");
  log.write("warn", "tool_call", "tools/call run_command: POLICY_DENIED\nforged line", {
    code: "POLICY_DENIED",
    exit: null,
    args: '{"command":"rm -rf /"}',
    evil: "a b=c\nd",
  });
  assert.equal(lines.length, 1);
  assert.equal(
    lines[0],
    '2026-12-01T22:30:00.000Z htmcp: warning: tools/call run_command: POLICY_DENIED\\nforged line code=POLICY_DENIED exit=- args="{\\"command\\":\\"rm -rf /\\"}" evil="a b=c\\nd"',
  );
  assert.ok(!lines[0]!.includes("\n"));
});

Deno.test("the level filter drops lines below it; lifecycle lines are always written", () => {
  const { lines, log } = capture("json", "warn");
  log.write("debug", "a", "debug");
  log.write("info", "b", "info");
  log.write("warn", "c", "warn");
  log.write("error", "d", "error");
  log.lifecycle("server_listening", "serving MCP at http://127.0.0.1:1/mcp");
  assert.deepEqual(lines.map((line) => JSON.parse(line).event), ["c", "d", "server_listening"]);
  assert.equal(JSON.parse(lines[2]!).level, "info");
  assert.equal(log.enabled("info"), false);
  assert.equal(log.enabled("error"), true);
});
