/**
 * The operator log of real server processes: over HTTP with the real SDK
 * client, one JSON line per request and per call on stderr; over stdio, text
 * lines a person can read, and nothing on stdout but MCP.
 */
import assert from "node:assert/strict";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { cleanUp, startServer } from "../e2e/_http_server.ts";
import { LAUNCH, policyToml, serverEnv, startHarness } from "../_helpers/stdio_harness.ts";
import { prepareJail } from "../_helpers/jail.ts";
import { waitUntil } from "../_helpers/wait_until.ts";

const OUTPUT_CANARY = "LOG-OUTPUT-CANARY-51c2";
const DOWNLOAD_TOKEN = "dl-token-canary-" + "Zr8qX1vB6nM3kP0wT5yU7iO9";
const FAKE_SECRET = "ghp_" + "Lq7x2MmN4pR7tV1wY3bC5dF6gH9jK0sA2eU9";

type Line = Record<string, unknown>;

function jsonLines(stderr: string): Line[] {
  return stderr.split("\n").filter((line) => line !== "").map((line) => {
    try {
      return JSON.parse(line) as Line;
    } catch {
      throw new Error(`a stderr line is not JSON: ${line}`);
    }
  });
}

Deno.test({
  name: "HTTP server in json format: one line per request and per call, with the named fields, " +
    "refusals at warn, and neither output nor an unredacted secret",
  sanitizeResources: false,
  sanitizeOps: false,
  async fn() {
    const server = await startServer({
      allow: ["cat", "echo"],
      files: { "notes.txt": `${OUTPUT_CANARY}\n` },
      extraToml: '[log]\nformat = "json"\nlevel = "info"',
    });
    try {
      const client = new Client({ name: "log-e2e", version: "0" });
      await client.connect(new StreamableHTTPClientTransport(new URL(server.url)));
      const ran = await client.callTool({
        name: "run_command",
        arguments: { command: "cat notes.txt" },
      });
      assert.equal((ran.structuredContent as { code: string }).code, "OK");
      const refused = await client.callTool({
        name: "run_command",
        arguments: { command: `rm ${FAKE_SECRET}` },
      });
      assert.equal((refused.structuredContent as { code: string }).code, "POLICY_DENIED");
      // A download URL's last segment is a capability: the request line masks it.
      const guessed = await fetch(new URL(`/download/${DOWNLOAD_TOKEN}`, server.url));
      await guessed.body?.cancel();
      assert.equal(guessed.status, 404);
      await client.close();
      await server.stop();

      const lines = jsonLines(server.stderr());
      for (const line of lines) {
        assert.match(String(line.time), /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
        assert.ok(["info", "warn", "error"].includes(String(line.level)), JSON.stringify(line));
        assert.equal(typeof line.event, "string");
      }
      const listening = lines.find((l) => l.event === "server_listening");
      assert.equal(listening?.url, server.url, "the startup line is in the same logger");
      assert.ok(lines.some((l) => l.event === "permission_layer"));
      assert.ok(lines.some((l) => l.event === "server_stopped"));

      const posts = lines.filter((l) => l.event === "http_request" && l.method === "POST");
      assert.ok(posts.length >= 3, "initialize and two calls at least");
      for (const post of posts) {
        assert.equal(post.path, "/mcp");
        assert.equal(typeof post.status, "number");
        assert.equal(typeof post.duration_ms, "number");
        assert.equal(post.remote_addr, "127.0.0.1");
      }
      assert.ok(posts.some((l) => l.status === 200 && l.level === "info"));

      const calls = lines.filter((l) => l.event === "tool_call");
      assert.equal(calls.length, 2, JSON.stringify(calls));
      const ok = calls.find((l) => l.code === "OK") as Line;
      assert.equal(ok.level, "info");
      assert.equal(ok.tool, "run_command");
      assert.equal(ok.verdict, "ok");
      assert.equal(ok.exit, 0);
      assert.equal(ok.transport, "http");
      assert.equal(ok.client_id, null);
      assert.equal(typeof ok.duration_ms, "number");
      assert.equal(typeof ok.session_id, "string", "the MCP session of the call");
      const denied = calls.find((l) => l.code === "POLICY_DENIED") as Line;
      assert.equal(denied.level, "warn");
      assert.equal(denied.verdict, "refused");
      assert.equal(denied.exit, null);
      assert.match(String(denied.args), /\[REDACTED/, "arguments are logged redacted");

      const download = lines.find((l) =>
        l.event === "http_request" && String(l.path).startsWith("/download/")
      );
      assert.equal(download?.path, "/download/{token}", JSON.stringify(download));
      assert.ok(!server.stderr().includes(DOWNLOAD_TOKEN), "no download token in the log");
      assert.ok(!server.stderr().includes(OUTPUT_CANARY), "no command output in the log");
      assert.ok(!server.stderr().includes(FAKE_SECRET), "no unredacted secret in the log");
    } finally {
      await cleanUp(server);
    }
  },
});

Deno.test({
  name: '[log] level = "warn" leaves out requests and healthy calls but keeps refusals',
  sanitizeResources: false,
  sanitizeOps: false,
  async fn() {
    const server = await startServer({ extraToml: '[log]\nformat = "json"\nlevel = "warn"' });
    try {
      const client = new Client({ name: "log-level", version: "0" });
      await client.connect(new StreamableHTTPClientTransport(new URL(server.url)));
      await client.callTool({ name: "run_command", arguments: { command: "echo fine" } });
      await client.callTool({ name: "run_command", arguments: { command: "rm x" } });
      await client.close();
      await server.stop();
      const lines = jsonLines(server.stderr());
      const lifecycle = new Set([
        "permission_layer",
        "sandbox",
        "fd_budget",
        "server_listening",
        "server_stopped",
      ]);
      for (const line of lines.filter((l) => !lifecycle.has(String(l.event)))) {
        assert.ok(line.level === "warn" || line.level === "error", JSON.stringify(line));
      }
      assert.ok(lines.some((l) => l.event === "server_listening"), "lifecycle lines stay");
      const calls = lines.filter((l) => l.event === "tool_call");
      assert.deepEqual(calls.map((l) => l.code), ["POLICY_DENIED"]);
      assert.ok(!lines.some((l) => l.event === "http_request" && l.status === 200));
    } finally {
      await cleanUp(server);
    }
  },
});

Deno.test({
  name: "stdio server in the default text format writes readable call lines on stderr",
  sanitizeResources: false,
  sanitizeOps: false,
  async fn() {
    const h = await startHarness({});
    try {
      assert.equal((await h.call("run_command", { command: "echo hello" })).code, "OK");
      assert.equal((await h.call("run_command", { command: "rm -rf /" })).code, "POLICY_DENIED");
      // Each call's line is written just after its answer.
      await waitUntil(
        () => h.stderr().includes("tools/call run_command: POLICY_DENIED"),
        "the refused call's line",
      );
      const lines = h.stderr().split("\n");
      const ok = lines.find((l) => l.includes("tools/call run_command: OK"));
      assert.match(
        ok ?? "",
        /^\d{4}-\d\d-\d\dT[\d:.]+Z htmcp: tools\/call run_command: OK transport=stdio client_id=- tool=run_command code=OK verdict=ok exit=0 duration_ms=[\d.]+ args="\{\\"command\\":\\"echo hello\\"\}"$/,
      );
      const denied = lines.find((l) => l.includes("tools/call run_command: POLICY_DENIED"));
      assert.match(denied ?? "", / htmcp: warning: tools\/call run_command: POLICY_DENIED /);
      assert.match(denied ?? "", / verdict=refused exit=- /);
      assert.ok(lines.some((l) => / htmcp: sandbox: /.test(l)), "the startup lines too");
    } finally {
      await h.close();
    }
  },
});

Deno.test({
  name: "stdio server: stdout carries only JSON-RPC while every log line goes to stderr",
  sanitizeResources: false,
  sanitizeOps: false,
  async fn() {
    const dir = await Deno.realPath(await Deno.makeTempDir({ prefix: "htmcp-log-stdout-" }));
    try {
      const jail = `${dir}/jail`;
      await Deno.mkdir(jail);
      await prepareJail(jail);
      const policyPath = `${dir}/policy.toml`;
      await Deno.writeTextFile(
        policyPath,
        policyToml(jail, `${dir}/audit.jsonl`, {
          allow: ["echo"],
          extraToml: '[log]\nformat = "json"\nlevel = "debug"',
        }),
      );
      const child = new Deno.Command(Deno.execPath(), {
        args: ["run", "--quiet", "--allow-all", LAUNCH, "serve", "--policy", policyPath],
        env: serverEnv(dir),
        clearEnv: true,
        stdin: "piped",
        stdout: "piped",
        stderr: "piped",
      }).spawn();
      const messages = [
        {
          jsonrpc: "2.0",
          id: 1,
          method: "initialize",
          params: {
            protocolVersion: "2025-06-18",
            capabilities: {},
            clientInfo: { name: "raw", version: "0" },
          },
        },
        { jsonrpc: "2.0", method: "notifications/initialized" },
        {
          jsonrpc: "2.0",
          id: 2,
          method: "tools/call",
          params: { name: "run_command", arguments: { command: "echo on-stdout-only" } },
        },
      ];
      const writer = child.stdin.getWriter();
      const encoder = new TextEncoder();
      const reader = child.stdout.pipeThrough(new TextDecoderStream()).getReader();
      let stdout = "";
      for (const message of messages) {
        await writer.write(encoder.encode(JSON.stringify(message) + "\n"));
        if ("id" in message) {
          // Wait for this request's answer before the next one.
          while (!stdout.split("\n").some((l) => l.includes(`"id":${message.id}`))) {
            const { value, done } = await reader.read();
            if (done) break;
            stdout += value;
          }
        }
      }
      await writer.close();
      for (;;) {
        const { value, done } = await reader.read();
        if (done) break;
        stdout += value;
      }
      const stderr = new TextDecoder().decode(
        (await new Response(child.stderr).arrayBuffer()) as ArrayBuffer,
      );
      await child.status;

      const outLines = stdout.split("\n").filter((l) => l !== "");
      assert.equal(outLines.length, 2, stdout);
      for (const line of outLines) assert.equal(JSON.parse(line).jsonrpc, "2.0");
      assert.ok(stdout.includes("on-stdout-only"), "the command's output is in the MCP answer");
      const logLines = jsonLines(stderr);
      const call = logLines.find((l) => l.event === "tool_call");
      assert.equal(call?.code, "OK");
      assert.equal(call?.transport, "stdio");
      assert.ok(!stderr.includes("on-stdout-only\\n"), "the output is not in the log");
    } finally {
      await Deno.remove(dir, { recursive: true }).catch(() => {});
    }
  },
});
