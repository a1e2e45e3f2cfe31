/**
 * The tools/call observation point, in process with the real SDK client and
 * server: every call gets one line, results and errors pass through
 * untouched, made-up tool names do not become labels, and the handler runs
 * inside the call scope that carries the checked traceparent.
 */
import assert from "node:assert/strict";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import type { JSONRPCMessage } from "@modelcontextprotocol/sdk/types.js";
import * as z from "zod";
import { createRedactor } from "../../src/redact/mod.ts";
import {
  configureOperatorLog,
  currentTraceparent,
  instrumentToolCalls,
} from "../../src/telemetry/mod.ts";
import { STDIO_CALLER } from "../../src/tools/caller.ts";
import { waitUntil } from "../_helpers/wait_until.ts";

const TRACEPARENT = "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01";

class MemoryEnd {
  peer: MemoryEnd | null = null;
  onmessage?: (message: JSONRPCMessage) => void;
  onclose?: () => void;
  start(): Promise<void> {
    return Promise.resolve();
  }
  send(message: JSONRPCMessage): Promise<void> {
    const peer = this.peer;
    queueMicrotask(() => peer?.onmessage?.(message));
    return Promise.resolve();
  }
  close(): Promise<void> {
    this.onclose?.();
    return Promise.resolve();
  }
}

Deno.test("every tools/call is logged once, passes through untouched, and sees its traceparent", async () => {
  const lines: Record<string, unknown>[] = [];
  configureOperatorLog({ format: "json", level: "debug" }, (line) => lines.push(JSON.parse(line)));
  const seen: (string | null)[] = [];
  const server = new McpServer({ name: "t", version: "0" });
  instrumentToolCalls(
    server,
    createRedactor({ enabled: true, entropyFallback: false, extraPatterns: [] }),
    STDIO_CALLER,
  );
  server.registerTool("probe", { inputSchema: { word: z.string() } }, async ({ word }) => {
    await new Promise((resolve) => setTimeout(resolve, 1));
    seen.push(currentTraceparent());
    return {
      content: [{ type: "text", text: `said ${word}` }],
      structuredContent: { code: "OK", exit_code: 7 },
    };
  });
  server.registerTool("broken", {}, () => {
    throw new Error("tool blew up");
  });
  const a = new MemoryEnd();
  const b = new MemoryEnd();
  a.peer = b;
  b.peer = a;
  await server.connect(a);
  const client = new Client({ name: "t", version: "0" });
  await client.connect(b);
  try {
    const traced = await client.callTool({
      name: "probe",
      arguments: { word: "hi" },
      _meta: { traceparent: TRACEPARENT },
    });
    assert.deepEqual(traced.content, [{ type: "text", text: "said hi" }]);
    assert.deepEqual(traced.structuredContent, { code: "OK", exit_code: 7 });
    await client.callTool({
      name: "probe",
      arguments: { word: "again" },
      _meta: { traceparent: TRACEPARENT.toUpperCase() },
    });
    const unknown = await client.callTool({ name: "made_up_name_123", arguments: {} });
    assert.equal(unknown.isError, true);
    const broken = await client.callTool({ name: "broken", arguments: {} });
    assert.equal(broken.isError, true);

    assert.deepEqual(seen, [TRACEPARENT, null], "the scope holds only a valid traceparent");
    assert.equal(currentTraceparent(), null, "outside a call there is none");
    // Each line is written just after its answer, not before it.
    const callLines = () => lines.filter((line) => line.event === "tool_call");
    await waitUntil(() => callLines().length >= 4, "the four call lines");
    const calls = callLines();
    assert.deepEqual(calls.map((line) => [line.tool, line.code, line.verdict, line.exit]), [
      ["probe", "OK", "ok", 7],
      ["probe", "OK", "ok", 7],
      ["_unknown", "tool_error", "failed", null],
      ["broken", "tool_error", "failed", null],
    ]);
    assert.equal(calls[0]!.trace_id, "0af7651916cd43dd8448eb211c80319c");
    assert.equal(calls[1]!.trace_id, undefined);
    assert.ok(!JSON.stringify(lines).includes("made_up_name_123"), "no made-up name is logged");
    assert.ok(!JSON.stringify(lines).includes("tool blew up"), "no error text is logged");
  } finally {
    await client.close();
    configureOperatorLog(undefined);
  }
});
