/**
 * In-flight calls end with their CANCELLED answer, never an empty stream:
 * on shutdown (what SIGTERM runs), on session DELETE, and when the client
 * closes the response stream of a running run_command. Regression: the
 * official client waited its whole request timeout (60 s) for an answer that
 * never came. Also: a second in-flight request with the same id is refused
 * before anything runs.
 */
import assert from "node:assert/strict";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { type HttpHarness, initializeBody, MCP_POST_HEADERS, withHttp } from "./_harness.ts";

async function waitForAttempt(h: HttpHarness, command: string): Promise<Record<string, unknown>> {
  for (let i = 0; i < 500; i++) {
    const attempt = (await h.records()).find((r) =>
      r.kind === "attempt" && r.command_raw === command
    );
    if (attempt !== undefined) return attempt;
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
  throw new Error(`no attempt for ${command}`);
}

async function outcomeOf(h: HttpHarness, callId: unknown): Promise<Record<string, unknown>> {
  for (let i = 0; i < 500; i++) {
    const outcome = (await h.records()).find((r) => r.kind === "outcome" && r.call_id === callId);
    if (outcome !== undefined) return outcome;
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
  throw new Error(`no outcome for ${callId}`);
}

async function connect(h: HttpHarness) {
  const transport = new StreamableHTTPClientTransport(h.mcpUrl);
  const client = new Client({ name: "cancel-test", version: "0" });
  await client.connect(transport);
  return { client, transport };
}

Deno.test("shutdown answers an in-flight run_command CANCELLED on its stream before closing", async () => {
  await withHttp({ auth: { mode: "none" } }, async (h) => {
    const { client } = await connect(h);
    const command = `sleep 30`;
    const pending = client.callTool({ name: "run_command", arguments: { command } });
    await waitForAttempt(h, command);
    const started = performance.now();
    await h.server.shutdown();
    const result = await pending;
    const ms = performance.now() - started;
    console.log(`shutdown: the SDK client had its CANCELLED answer after ${ms.toFixed(1)} ms`);
    assert.equal((result.structuredContent as { code: string }).code, "CANCELLED");
    assert.equal(result.isError, true);
    assert.ok(ms < 5_000);
    const records = await h.records();
    const attempt = records.find((r) => r.kind === "attempt" && r.command_raw === command);
    assert.equal((await outcomeOf(h, attempt?.call_id)).code, "CANCELLED");
    await client.close().catch(() => {});
  });
});

Deno.test("session DELETE answers its in-flight run_command CANCELLED before the stream ends", async () => {
  await withHttp({ auth: { mode: "none" } }, async (h) => {
    const { client, transport } = await connect(h);
    const command = `sleep 31`;
    const pending = client.callTool({ name: "run_command", arguments: { command } });
    const attempt = await waitForAttempt(h, command);
    const started = performance.now();
    await transport.terminateSession();
    const result = await pending;
    const ms = performance.now() - started;
    console.log(`DELETE: the SDK client had its CANCELLED answer after ${ms.toFixed(1)} ms`);
    assert.equal((result.structuredContent as { code: string }).code, "CANCELLED");
    assert.ok(ms < 5_000);
    assert.equal((await outcomeOf(h, attempt.call_id)).code, "CANCELLED");
    assert.equal(h.server.stats.open >= 0, true);
    await client.close().catch(() => {});
  });
});

async function rawSession(h: HttpHarness): Promise<Record<string, string>> {
  const init = await fetch(h.mcpUrl, {
    method: "POST",
    headers: MCP_POST_HEADERS,
    body: initializeBody(),
  });
  await init.body?.cancel();
  const session = init.headers.get("mcp-session-id");
  assert.ok(session !== null);
  const headers = { ...MCP_POST_HEADERS, "mcp-session-id": session };
  const initialized = await fetch(h.mcpUrl, {
    method: "POST",
    headers,
    body: JSON.stringify({ jsonrpc: "2.0", method: "notifications/initialized" }),
  });
  await initialized.body?.cancel();
  return headers;
}

function toolCall(id: number, command: string): string {
  return JSON.stringify({
    jsonrpc: "2.0",
    id,
    method: "tools/call",
    params: { name: "run_command", arguments: { command } },
  });
}

Deno.test("a client that closes the response stream of a running run_command cancels it; the outcome is audited CANCELLED", async () => {
  await withHttp({ auth: { mode: "none" } }, async (h) => {
    const headers = await rawSession(h);
    const command = "sleep 32";
    const abort = new AbortController();
    const response = await fetch(h.mcpUrl, {
      method: "POST",
      headers,
      body: toolCall(7, command),
      signal: abort.signal,
    });
    assert.equal(response.status, 200);
    const attempt = await waitForAttempt(h, command);
    const started = performance.now();
    abort.abort();
    const outcome = await outcomeOf(h, attempt.call_id);
    const ms = performance.now() - started;
    console.log(`stream closed: the command was killed and audited after ${ms.toFixed(1)} ms`);
    assert.equal(outcome.code, "CANCELLED");
    assert.ok(ms < 5_000, `took ${ms} ms`);
  });
});

Deno.test("a second in-flight request with the same id is refused with -32600 before anything runs", async () => {
  await withHttp({ auth: { mode: "none" } }, async (h) => {
    const headers = await rawSession(h);
    const first = fetch(h.mcpUrl, { method: "POST", headers, body: toolCall(9, "sleep 1") });
    await waitForAttempt(h, "sleep 1");
    const marker = `dup-${crypto.randomUUID()}`;
    const second = await fetch(h.mcpUrl, {
      method: "POST",
      headers,
      body: toolCall(9, `echo ${marker}`),
    });
    assert.equal(second.status, 409);
    const refused = await second.json();
    assert.equal(refused.error.code, -32600);
    assert.equal(refused.id, 9);
    const answered = await (await first).text();
    assert.match(answered, /"id":9/);
    assert.match(answered, /\\"code\\":\\"OK\\"|"code":"OK"/);
    const records = await h.records();
    assert.equal(
      records.some((r) => typeof r.command_raw === "string" && r.command_raw.includes(marker)),
      false,
      "the duplicate never reached the tool",
    );
    // Once answered, the id may be used again.
    const again = await fetch(h.mcpUrl, { method: "POST", headers, body: toolCall(9, "true") });
    assert.equal(again.status, 200);
    await again.body?.cancel();
  });
});

Deno.test("a long run_command's event stream has X-Accel-Buffering: no and ': keepalive' comments before its answer", async () => {
  await withHttp({ auth: { mode: "none" }, sseKeepAliveMs: 200 }, async (h) => {
    const headers = await rawSession(h);
    const response = await fetch(h.mcpUrl, {
      method: "POST",
      headers,
      body: toolCall(11, "sleep 1"),
    });
    assert.equal(response.headers.get("content-type"), "text/event-stream");
    assert.equal(response.headers.get("x-accel-buffering"), "no");
    const text = await response.text();
    const keepAlives = text.split("\n").filter((line) => line === ": keepalive").length;
    console.log(`${keepAlives} keep-alive comments during a 1 s command (every 200 ms)`);
    assert.ok(keepAlives >= 2, text.slice(0, 200));
    assert.ok(
      text.indexOf(": keepalive") < text.indexOf("data: "),
      "comments come before the answer",
    );
    assert.match(text, /"id":11/);
  });
});
