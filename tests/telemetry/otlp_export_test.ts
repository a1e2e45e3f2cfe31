/**
 * OpenTelemetry export end to end: the real server (under its generated
 * Deno permissions, through the launcher) driven by the real SDK client over
 * stdio, exporting with the real OpenTelemetry SDK to a loopback OTLP/HTTP
 * receiver this test runs.
 */
import assert from "node:assert/strict";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { startHarness } from "../_helpers/stdio_harness.ts";
import { cleanUp, startServer } from "../e2e/_http_server.ts";
import { attributeMap, type OtlpSpan, startOtlpReceiver } from "./_otlp_receiver.ts";

const CLIENT_TRACE = "0af7651916cd43dd8448eb211c80319c";
const CLIENT_SPAN = "b7ad6b7169203331";
const TRACEPARENT = `00-${CLIENT_TRACE}-${CLIENT_SPAN}-01`;
/** In a jail file only: it reaches the client as output, never an export. */
const OUTPUT_CANARY = "OUTPUT-CANARY-7f3a9c";
/** A token-shaped secret in the arguments: exported only redacted. */
const FAKE_SECRET = "ghp_" + "Zq8x2LmN4pR7tV1wY3bC5dF6gH9jK0sA2eU4";

Deno.test({
  name:
    "spans and metrics reach an OTLP/HTTP collector: MCP names, the client's trace as parent, " +
    "error.type on a refusal, and neither output nor an unredacted secret in anything exported",
  sanitizeResources: false,
  sanitizeOps: false,
  async fn() {
    const receiver = startOtlpReceiver();
    const h = await startHarness({
      files: { "notes.txt": `${OUTPUT_CANARY}\n` },
      extraToml: [
        "[log]",
        'format = "json"',
        "[telemetry]",
        `otlp_endpoint = ${JSON.stringify(receiver.endpoint)}`,
        'service_name = "htmcp-test"',
        "metrics_interval_ms = 1000",
      ].join("\n"),
    });
    try {
      const traced = await h.client.callTool({
        name: "run_command",
        arguments: { command: "cat notes.txt" },
        _meta: { traceparent: TRACEPARENT, tracestate: "vendor=abc" },
      });
      const ran = traced.structuredContent as { code: string; stdout: string };
      assert.equal(ran.code, "OK");
      assert.ok(ran.stdout.includes(OUTPUT_CANARY), "the client does get the output");

      const refused = await h.call("run_command", { command: "rm -rf notes.txt" });
      assert.equal(refused.code, "POLICY_DENIED");
      const secret = await h.call("run_command", { command: `echo ${FAKE_SECRET}` });
      assert.equal(secret.code, "OK");
      const forged = await h.client.callTool({
        name: "run_command",
        arguments: { command: "echo forged-parent" },
        _meta: { traceparent: `${TRACEPARENT}\n{"kind":"forged"}` },
      });
      assert.equal((forged.structuredContent as { code: string }).code, "OK");

      await receiver.until(
        () => receiver.spans().filter((s) => s.name === "tools/call run_command").length >= 4,
        "four run_command spans",
      );
      // Metrics are cumulative and exported every second: wait for an export
      // taken after the last call (three ran, one was refused).
      const okCalls = (p: { metric: string; attributes: Record<string, unknown>; value: number }) =>
        p.metric === "htmcp.tool.calls" && p.attributes["gen_ai.tool.name"] === "run_command" &&
        p.attributes["htmcp.result_code"] === "OK" && p.value >= 3;
      await receiver.until(
        () =>
          receiver.points().some(okCalls) &&
          receiver.points().some((p) =>
            p.metric === "htmcp.tool.refusals" &&
            p.attributes["htmcp.result_code"] === "POLICY_DENIED"
          ),
        "the call and refusal counters after the last call",
      );

      const spans = receiver.spans().filter((s) => s.name === "tools/call run_command");
      const byArguments = (needle: string) =>
        spans.find((s) =>
          String(attributeMap(s.attributes)["gen_ai.tool.call.arguments"]).includes(needle)
        ) as OtlpSpan;

      // The traced call is a child of the client's span, in the client's trace.
      const child = byArguments("cat notes.txt");
      assert.ok(child !== undefined, "a span for the traced call");
      assert.equal(child.traceId, CLIENT_TRACE);
      assert.equal(child.parentSpanId, CLIENT_SPAN);
      assert.equal(child.kind, 2, "SpanKind.SERVER");
      const attrs = attributeMap(child.attributes);
      assert.equal(attrs["mcp.method.name"], "tools/call");
      assert.equal(attrs["gen_ai.tool.name"], "run_command");
      assert.equal(attrs["htmcp.result_code"], "OK");
      assert.equal(attrs["htmcp.exit_code"], 0);
      assert.equal(attrs["error.type"], undefined, "a healthy call has no error.type");
      assert.notEqual(child.status?.code, 2);

      // A refusal does not look healthy.
      const denied = byArguments("rm -rf");
      assert.ok(denied !== undefined, "a span for the refused call");
      const deniedAttrs = attributeMap(denied.attributes);
      assert.equal(deniedAttrs["error.type"], "POLICY_DENIED");
      assert.equal(deniedAttrs["htmcp.verdict"], "refused");
      assert.equal(denied.status?.code, 2, "status ERROR");
      assert.notEqual(denied.traceId, CLIENT_TRACE, "an untraced call starts its own trace");
      assert.equal(denied.parentSpanId ?? "", "");

      // The secret's span exists, with the secret redacted.
      const redacted = byArguments("[REDACTED");
      assert.ok(redacted !== undefined, "the secret call's arguments are exported redacted");

      const calls = receiver.points().filter((p) => p.metric === "htmcp.tool.calls");
      assert.ok(calls.some(okCalls), JSON.stringify(calls));
      assert.ok(
        !calls.some((p) => p.attributes["htmcp.result_code"] === "OK" && p.value > 3),
        "each call is counted once",
      );
      assert.ok(
        receiver.points().some((p) =>
          p.metric === "mcp.server.operation.duration" &&
          p.attributes["error.type"] === "POLICY_DENIED" && p.value >= 1
        ),
        "the duration histogram marks the refusal",
      );
      assert.ok(receiver.points().some((p) => p.metric === "htmcp.commands.running"));

      const everything = receiver.bodies().map((b) => b.text).join("\n");
      assert.ok(receiver.bodies().every((b) => b.contentType?.startsWith("application/json")));
      assert.ok(everything.includes('"htmcp-test"'), "service.name from the policy");
      assert.ok(!everything.includes(OUTPUT_CANARY), "no command output in any export");
      assert.ok(!everything.includes(FAKE_SECRET), "no unredacted secret in any export");
      assert.ok(!h.stderr().includes(OUTPUT_CANARY), "no command output in the operator log");
      assert.ok(!h.stderr().includes(FAKE_SECRET), "no unredacted secret in the operator log");

      // The audit record of the traced call carries the client's traceparent.
      const records = await h.records();
      const attempt = records.find((r) =>
        r.kind === "attempt" && r.command_raw === "cat notes.txt"
      );
      assert.equal(attempt?.traceparent, TRACEPARENT);
      const untraced = records.find((r) => r.kind === "attempt" && r.code === "POLICY_DENIED");
      assert.ok(untraced !== undefined && !("traceparent" in untraced));
      // A malformed traceparent is ignored: not in the record, not the span's parent.
      const forgedAttempt = records.find((r) =>
        r.kind === "attempt" && r.command_raw === "echo forged-parent"
      );
      assert.ok(forgedAttempt !== undefined && !("traceparent" in forgedAttempt));
      const forgedSpan = byArguments("forged-parent");
      assert.notEqual(forgedSpan.traceId, CLIENT_TRACE);
      assert.ok(!everything.includes('"kind":"forged"') && !everything.includes("forged\\"));
    } finally {
      await h.close();
      await receiver.close();
    }
  },
});

Deno.test({
  name: "over HTTP a call's span carries the MCP session id, and stopping the server flushes " +
    "spans and metrics before it exits",
  sanitizeResources: false,
  sanitizeOps: false,
  async fn() {
    const receiver = startOtlpReceiver();
    // The default metrics interval (60 s) is longer than this test: the
    // metrics it sees are the ones the shutdown flushed.
    const server = await startServer({
      allow: ["echo"],
      extraToml: `[telemetry]\notlp_endpoint = ${JSON.stringify(receiver.endpoint)}`,
    });
    try {
      const client = new Client({ name: "otel-http", version: "0" });
      const transport = new StreamableHTTPClientTransport(new URL(server.url));
      await client.connect(transport);
      const sessionId = transport.sessionId;
      assert.ok(sessionId !== undefined);
      const result = await client.callTool({
        name: "run_command",
        arguments: { command: "echo over-http" },
        _meta: { traceparent: TRACEPARENT },
      });
      assert.equal((result.structuredContent as { code: string }).code, "OK");
      await client.close();
      const status = await server.stop();
      assert.equal(status.code, 0);

      const spans = receiver.spans().filter((s) => s.name === "tools/call run_command");
      assert.equal(spans.length, 1, "the span was exported before the process exited");
      const attrs = attributeMap(spans[0]!.attributes);
      assert.equal(attrs["mcp.session.id"], sessionId);
      assert.equal(attrs["network.transport"], "tcp");
      assert.equal(attrs["htmcp.transport"], "http");
      assert.equal(spans[0]!.traceId, CLIENT_TRACE);
      assert.ok(
        receiver.points().some((p) =>
          p.metric === "htmcp.tool.calls" && p.attributes["htmcp.result_code"] === "OK" &&
          p.value === 1
        ),
        "the metrics were flushed at shutdown",
      );
      assert.ok(!receiver.bodies().some((b) => b.text.includes("over-http\\n")));
    } finally {
      await cleanUp(server);
      await receiver.close();
    }
  },
});
