/**
 * The size limiter's parts on their own: exact bytes through, cut-off one
 * byte past the limit, the declared-length gate, and the parser-side helpers.
 */
import assert from "node:assert/strict";
import {
  declaredLength,
  declaredTooLarge,
  limitRequest,
  meterBody,
  readBodyWithin,
  RequestTooLargeError,
} from "../../../src/transport/http/body_limit.ts";
import { containsInitialize, toolCallsIn } from "../../../src/transport/http/tool_calls.ts";

function streamOf(chunks: Uint8Array[]): ReadableStream<Uint8Array> {
  return new ReadableStream({
    pull(controller) {
      const next = chunks.shift();
      if (next === undefined) controller.close();
      else controller.enqueue(next);
    },
  });
}

const TEXT = new TextEncoder().encode('{"w":"grüße 😀 日本"}');

Deno.test("readBodyWithin() returns the exact bytes at the limit, split inside a character", async () => {
  const cut = TEXT.indexOf(0xf0) + 1;
  const read = await readBodyWithin(
    streamOf([TEXT.slice(0, cut), TEXT.slice(cut)]),
    TEXT.byteLength,
  );
  assert.ok(read.ok);
  assert.deepEqual(read.bytes, TEXT);
});

Deno.test("readBodyWithin() refuses one byte past the limit and cancels the source", async () => {
  let cancelled = false;
  const source = new ReadableStream<Uint8Array>({
    pull(controller) {
      controller.enqueue(new Uint8Array(10));
    },
    cancel() {
      cancelled = true;
    },
  });
  const read = await readBodyWithin(source, 25);
  assert.deepEqual(read, { ok: false, observed: 30 });
  assert.equal(cancelled, true);
  assert.deepEqual(await readBodyWithin(streamOf([new Uint8Array(26)]), 25), {
    ok: false,
    observed: 26,
  });
  assert.equal((await readBodyWithin(streamOf([new Uint8Array(26)]), 0)).ok, true, "0 = off");
});

Deno.test("meterBody() passes chunks through unchanged and errors past the limit", async () => {
  const { stream, meter } = meterBody(streamOf([TEXT.slice(0, 5), TEXT.slice(5)]), TEXT.byteLength);
  assert.deepEqual(new Uint8Array(await new Response(stream).arrayBuffer()), TEXT);
  assert.equal(meter.observed, TEXT.byteLength);
  assert.equal(meter.exceeded, false);

  const over = meterBody(streamOf([TEXT.slice(0, 5), TEXT.slice(5)]), TEXT.byteLength - 1);
  await assert.rejects(() => new Response(over.stream).arrayBuffer(), RequestTooLargeError);
  assert.equal(over.meter.exceeded, true);
});

Deno.test("limitRequest() keeps method, URL and headers; a bodiless request is untouched", async () => {
  const request = new Request("http://127.0.0.1/register?x=1", {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: TEXT,
  });
  const limited = limitRequest(request, 1000);
  assert.equal(limited.request.method, "POST");
  assert.equal(limited.request.url, "http://127.0.0.1/register?x=1");
  assert.equal(limited.request.headers.get("content-type"), "application/json");
  assert.deepEqual(new Uint8Array(await limited.request.arrayBuffer()), TEXT);
  const get = new Request("http://127.0.0.1/x");
  assert.equal(limitRequest(get, 10).request, get);
});

Deno.test("declaredTooLarge() reads Content-Length; a malformed length never slips under", () => {
  const withLength = (value: string) =>
    new Request("http://x/", { method: "POST", headers: { "content-length": value } });
  assert.equal(declaredTooLarge(withLength("100"), 100), false);
  assert.equal(declaredTooLarge(withLength("101"), 100), true);
  assert.equal(declaredTooLarge(withLength("101"), 0), false, "0 = off");
  assert.equal(declaredLength(withLength("1e3")), Number.POSITIVE_INFINITY);
  assert.equal(declaredTooLarge(withLength("-1"), 100), true);
  assert.equal(declaredLength(new Request("http://x/")), null);
});

Deno.test("toolCallsIn() finds every tools/call with its scope, in single messages and batches", () => {
  const call = (name: unknown) => ({
    jsonrpc: "2.0",
    id: 1,
    method: "tools/call",
    params: { name },
  });
  assert.deepEqual(toolCallsIn(call("run_command")), [
    { tool: "run_command", scope: "shell:execute", requestId: "1", id: 1 },
  ]);
  assert.deepEqual(
    toolCallsIn([call("describe_policy"), { method: "ping" }, call("explain_command")]),
    [
      { tool: "describe_policy", scope: "shell:read", requestId: "1", id: 1 },
      { tool: "explain_command", scope: "shell:read", requestId: "1", id: 1 },
    ],
  );
  // Unknown names and inherited keys need no scope here: the SDK answers "not found".
  assert.deepEqual(toolCallsIn(call("__proto__")), [
    { tool: "__proto__", scope: null, requestId: "1", id: 1 },
  ]);
  assert.deepEqual(toolCallsIn(call(["run_command"])), [
    { tool: null, scope: null, requestId: "1", id: 1 },
  ]);
  // A notification-shaped call (no id) has no request id to record.
  assert.deepEqual(toolCallsIn({ method: "tools/call", params: { name: "run_command" } }), [
    { tool: "run_command", scope: "shell:execute", requestId: null, id: null },
  ]);
  assert.deepEqual(toolCallsIn(null), []);
  assert.deepEqual(toolCallsIn("tools/call"), []);
  assert.equal(containsInitialize({ method: "initialize" }), true);
  assert.equal(containsInitialize([{ method: "ping" }]), false);
});
