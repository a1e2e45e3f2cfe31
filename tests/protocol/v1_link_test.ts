import assert from "node:assert/strict";
import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import * as z from "zod";
import { V1Link } from "../../src/protocol/v1_link.ts";
import { eraOfOpening } from "../../src/transport/stdio_era.ts";

function server(): { server: McpServer; aborted: Promise<string> } {
  const s = new McpServer({ name: "t", version: "1" });
  const { promise, resolve } = Promise.withResolvers<string>();
  s.registerTool("wait", { inputSchema: { ms: z.number() } }, async ({ ms }, extra) => {
    await new Promise<void>((done) => {
      const timer = setTimeout(done, ms);
      extra.signal.addEventListener("abort", () => {
        clearTimeout(timer);
        resolve(String(extra.signal.reason));
        done();
      });
    });
    await extra.sendNotification({
      method: "notifications/progress",
      params: { progressToken: "p", progress: 1 },
    });
    return { content: [{ type: "text", text: "waited" }] };
  });
  s.registerTool("ask", {}, async () => {
    // A 2025-style request to the client: the link must refuse it.
    try {
      await s.server.elicitInput({
        message: "ok?",
        requestedSchema: { type: "object", properties: {} },
      });
      return { content: [{ type: "text", text: "answered" }] };
    } catch (error) {
      return {
        content: [{ type: "text", text: `refused: ${(error as Error).message}` }],
        isError: true,
      };
    }
  });
  return { server: s, aborted: promise };
}

Deno.test("the link initializes the server with the envelope's client and relays a call and its progress", async () => {
  const { server: s } = server();
  const link = new V1Link();
  await s.connect(link);
  const init = await link.initialize({ name: "c", version: "9" }, { elicitation: {} });
  assert.equal(init.ok, true);
  assert.equal(s.server.getClientVersion()?.name, "c");
  const notes: unknown[] = [];
  const outcome = await link.request("tools/call", {
    name: "wait",
    arguments: { ms: 1 },
    _meta: { progressToken: "p" },
  }, { onNotification: (n) => notes.push(n.method) });
  assert.ok(outcome.ok);
  assert.deepEqual(notes, ["notifications/progress"]);
  // A bad argument is the server's own JSON-RPC or tool error, passed on.
  const bad = await link.request("tools/call", { name: "wait", arguments: { ms: "x" } });
  assert.ok(!bad.ok || bad.result.isError === true);
  await s.close();
});

Deno.test("aborting a linked call cancels the server's handler", async () => {
  const { server: s, aborted } = server();
  const link = new V1Link();
  await s.connect(link);
  await link.initialize(undefined, undefined);
  const controller = new AbortController();
  const pending = link.request("tools/call", { name: "wait", arguments: { ms: 10_000 } }, {
    signal: controller.signal,
  });
  await new Promise((resolve) => setTimeout(resolve, 20));
  controller.abort(new Error("gone"));
  assert.deepEqual(await pending, {
    ok: false,
    error: { code: -32800, message: "Request cancelled." },
  });
  assert.match(await aborted, /gone/);
  await s.close();
});

Deno.test("a request from the server to the client is refused on the link, never left hanging", async () => {
  const { server: s } = server();
  const link = new V1Link();
  await s.connect(link);
  await link.initialize({ name: "c", version: "1" }, { elicitation: {} });
  const outcome = await link.request("tools/call", { name: "ask", arguments: {} });
  assert.ok(outcome.ok);
  assert.match(JSON.stringify(outcome.result), /refused: .*2026-07-28/);
  await s.close();
});

Deno.test("eraOfOpening() opens 2026 only on the _meta protocol-version claim", () => {
  const claim = { "io.modelcontextprotocol/protocolVersion": "2026-07-28" };
  assert.equal(eraOfOpening({ method: "tools/list", params: { _meta: claim } }), "2026-07-28");
  assert.equal(eraOfOpening({ method: "initialize", params: { _meta: claim } }), "2025");
  assert.equal(eraOfOpening({ method: "tools/list", params: {} }), "2025");
  assert.equal(eraOfOpening({ method: "tools/list", params: { _meta: { x: 1 } } }), "2025");
  assert.equal(eraOfOpening([{ method: "tools/list", params: { _meta: claim } }]), "2025");
  assert.equal(eraOfOpening(null), "2025");
});
