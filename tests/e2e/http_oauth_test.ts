/**
 * The whole remote path with real parts: `serveHttp` on 127.0.0.1, the real
 * SDK client with its OAuth support (discovery, dynamic registration, PKCE
 * S256, the resource parameter), the operator's approval with the PIN, then
 * tool calls that really run commands in the jail.
 */
import assert from "node:assert/strict";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { PIN, withHttp } from "../transport/http/_harness.ts";
import { connectWithOAuth } from "../transport/http/_oauth.ts";

Deno.test("the SDK client completes OAuth headlessly, then lists and calls tools over HTTP", async () => {
  await withHttp({}, async (h) => {
    const conn = await connectWithOAuth(h.mcpUrl, PIN);
    try {
      const authUrl = conn.provider.authorizationUrl as URL;
      assert.equal(authUrl.searchParams.get("code_challenge_method"), "S256");
      assert.equal(authUrl.searchParams.get("resource"), `${h.url}/mcp`);
      assert.ok(conn.transport.sessionId !== undefined);

      const { tools } = await conn.client.listTools();
      assert.deepEqual(tools.map((t: { name: string }) => t.name).sort(), [
        "create_file_link",
        "describe_policy",
        "explain_command",
        "job_cancel",
        "job_list",
        "job_output",
        "job_status",
        "list_file_links",
        "revoke_file_link",
        "run_command",
        "session_end",
        "session_start",
      ]);
      const ran = await conn.client.callTool({
        name: "run_command",
        arguments: { command: "echo über-remote" },
      });
      const result = ran.structuredContent as { code: string; stdout: string };
      assert.equal(result.code, "OK");
      assert.equal(result.stdout, "über-remote\n");

      const clientId = conn.provider.clientInformation()?.client_id;
      assert.ok(clientId !== undefined);
      const calls = await h.events("tool_call");
      assert.deepEqual(calls.map((e) => [e.client_id, e.tool]), [[clientId, "run_command"]]);
      assert.equal(typeof calls[0]?.request_id, "string", "the JSON-RPC id links the event");
      const attempts = (await h.records()).filter((r) => r.kind === "attempt");
      assert.equal(attempts.at(-1)?.client_id, clientId);
    } finally {
      await conn.close();
    }
  });
});

Deno.test("a client without a token is refused with 401 and the metadata challenge", async () => {
  await withHttp({}, async (h) => {
    const client = new Client({ name: "no-token", version: "0" });
    const transport = new StreamableHTTPClientTransport(h.mcpUrl);
    await assert.rejects(() => client.connect(transport));
    await client.close();
    const response = await fetch(h.mcpUrl, { method: "POST", body: "{}" });
    await response.body?.cancel();
    assert.equal(response.status, 401);
    assert.match(
      response.headers.get("www-authenticate") ?? "",
      new RegExp(`resource_metadata="${h.url}/.well-known/oauth-protected-resource/mcp"`),
    );
  });
});
