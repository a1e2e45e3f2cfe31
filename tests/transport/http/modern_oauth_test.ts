/**
 * With OAuth on, the 2026-07-28 era is exactly as strict as the 2025 one:
 * no token is 401 with the metadata challenge, a token without the tool's
 * scope is 403 `insufficient_scope` (audited, nothing runs), and a good
 * token's call is audited under its client id and era.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { PIN, withHttp } from "./_harness.ts";
import { connectWithOAuth } from "./_oauth.ts";
import { exists } from "../../_helpers/exists.ts";

const ENVELOPE = {
  "io.modelcontextprotocol/protocolVersion": "2026-07-28",
  "io.modelcontextprotocol/clientInfo": { name: "raw", version: "1" },
  "io.modelcontextprotocol/clientCapabilities": {},
};

function modernCall(url: URL, command: string, token: string | null): Promise<Response> {
  return fetch(url, {
    method: "POST",
    headers: {
      "content-type": "application/json",
      accept: "application/json, text/event-stream",
      "mcp-protocol-version": "2026-07-28",
      "mcp-method": "tools/call",
      "mcp-name": "run_command",
      ...(token === null ? {} : { authorization: `Bearer ${token}` }),
    },
    body: JSON.stringify({
      jsonrpc: "2.0",
      id: 1,
      method: "tools/call",
      params: { name: "run_command", arguments: { command }, _meta: ENVELOPE },
    }),
  });
}

async function tokenFor(mcpUrl: URL, scope: string): Promise<string> {
  const connection = await connectWithOAuth(mcpUrl, PIN, scope);
  const token = connection.provider.tokens()?.access_token;
  await connection.close();
  assert.ok(token !== undefined);
  return token;
}

Deno.test("2026-07-28 with OAuth: no token is 401, a read-only token cannot run a command (403, audited, nothing runs), a full token runs it under its client id", async () => {
  await withHttp({ allow: ["touch"] }, async (h) => {
    const anonymous = await modernCall(h.mcpUrl, "touch canary", null);
    assert.equal(anonymous.status, 401);
    assert.match(anonymous.headers.get("www-authenticate") ?? "", /resource_metadata=/);
    await anonymous.body?.cancel();

    const readOnly = await tokenFor(h.mcpUrl, "shell:read");
    const refused = await modernCall(h.mcpUrl, "touch canary", readOnly);
    assert.equal(refused.status, 403);
    assert.match(refused.headers.get("www-authenticate") ?? "", /insufficient_scope/);
    await refused.body?.cancel();
    assert.equal(await exists(join(h.jail, "canary")), false);
    assert.equal((await h.records()).filter((r) => r.kind === "attempt").length, 0);
    const denied = await h.events("scope_denied");
    assert.equal(denied.at(-1)?.tool, "run_command");

    const full = await tokenFor(h.mcpUrl, "shell:read shell:execute");
    const ran = await modernCall(h.mcpUrl, "touch canary", full);
    assert.equal(ran.status, 200);
    assert.match(await ran.text(), /\\?"code\\?":\\?"OK/);
    assert.equal(await exists(join(h.jail, "canary")), true);
    const attempt = (await h.records()).find((r) => r.kind === "attempt");
    assert.equal(attempt?.protocol_era, "2026-07-28");
    assert.equal(typeof attempt?.client_id, "string");
    const calls = await h.events("tool_call");
    assert.ok(calls.some((r) => r.client_id === attempt?.client_id && r.tool === "run_command"));
  });
});
