/**
 * The 2026-07-28 route's event streams, in process: a tool call is answered
 * on a stream that proxies must not buffer, with `:` comments while the
 * command runs; and a 2025 client on the same server still gets a session.
 */
import assert from "node:assert/strict";
import { withHttp } from "./_harness.ts";

const ENVELOPE = {
  "io.modelcontextprotocol/protocolVersion": "2026-07-28",
  "io.modelcontextprotocol/clientInfo": { name: "raw", version: "1" },
  "io.modelcontextprotocol/clientCapabilities": {},
};

Deno.test("a 2026-07-28 run_command stream has X-Accel-Buffering: no and ':' keep-alive comments before its answer, and no session id", async () => {
  await withHttp({ auth: { mode: "none" }, sseKeepAliveMs: 200 }, async (h) => {
    const response = await fetch(h.mcpUrl, {
      method: "POST",
      headers: {
        "content-type": "application/json",
        accept: "application/json, text/event-stream",
        "mcp-protocol-version": "2026-07-28",
        "mcp-method": "tools/call",
        "mcp-name": "run_command",
      },
      body: JSON.stringify({
        jsonrpc: "2.0",
        id: 5,
        method: "tools/call",
        params: { name: "run_command", arguments: { command: "sleep 1" }, _meta: ENVELOPE },
      }),
    });
    assert.equal(response.status, 200);
    assert.match(response.headers.get("content-type") ?? "", /^text\/event-stream/);
    assert.equal(response.headers.get("x-accel-buffering"), "no");
    assert.equal(response.headers.get("mcp-session-id"), null);
    const text = await response.text();
    const comments = text.split("\n").filter((line) => line.startsWith(":")).length;
    assert.ok(comments >= 2, text.slice(0, 300));
    assert.ok(text.indexOf("\n:") < text.indexOf("data: ") || text.startsWith(":"));
    assert.match(text, /"resultType":"complete"/);
    assert.match(text, /"id":5/);
    const attempt = (await h.records()).find((r) => r.kind === "attempt");
    assert.equal(attempt?.command_raw, "sleep 1");
  });
});

Deno.test("a 2025 initialize on the same endpoint still opens a session", async () => {
  await withHttp({ auth: { mode: "none" } }, async (h) => {
    const response = await fetch(h.mcpUrl, {
      method: "POST",
      headers: {
        "content-type": "application/json",
        accept: "application/json, text/event-stream",
      },
      body: JSON.stringify({
        jsonrpc: "2.0",
        id: 1,
        method: "initialize",
        params: {
          protocolVersion: "2025-03-26",
          capabilities: {},
          clientInfo: { name: "old", version: "1" },
        },
      }),
    });
    assert.equal(response.status, 200);
    assert.ok(response.headers.get("mcp-session-id"));
    assert.match(await response.text(), /"protocolVersion":"2025-03-26"/);
  });
});
