/**
 * Two HTTP servers on one state dir and one audit log, as behind a load
 * balancer: a token one issued works at the other (shared secret and
 * clients), a revocation reaches both, and both write one valid chain.
 */
import { prepareJail } from "../_helpers/jail.ts";
import assert from "node:assert/strict";
import { join } from "node:path";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { createServerContext } from "../../src/server/context.ts";
import type { ServerContext } from "../../src/context/mod.ts";
import { serveHttp } from "../../src/transport/http/server.ts";
import { ClientRegistry } from "../../src/auth/state/registry.ts";
import { verifyAuditChain } from "../../src/audit/mod.ts";
import { harnessPolicy, PIN } from "../transport/http/_harness.ts";
import { connectWithOAuth } from "../transport/http/_oauth.ts";

async function start(dir: string, baseUrl: string | null) {
  const policy = harnessPolicy(dir, { allow: ["echo"] });
  const built = await createServerContext(policy);
  if (!built.ok) throw new Error(built.message);
  const context: ServerContext = built.context;
  const started = await serveHttp(context, {
    listen: "127.0.0.1:0",
    baseUrl,
    adminPin: PIN,
    warn: () => {},
  });
  if (!started.ok) throw new Error(started.message);
  return {
    policy,
    context,
    server: started.server,
    async close() {
      await started.server.shutdown();
      await context.close("test finished");
    },
  };
}

Deno.test("two HTTP servers on one state dir and one audit log: shared tokens and revocations, one chain", async () => {
  const dir = await Deno.makeTempDir({ prefix: "htmcp-two-http-" });
  await Deno.mkdir(join(dir, "jail"));
  await prepareJail(join(dir, "jail"));
  const first = await start(dir, null);
  // The second serves the same resource, as a replica behind one origin would.
  const second = await start(dir, first.server.url);
  try {
    assert.equal(first.policy.stateDir, second.policy.stateDir);
    const connection = await connectWithOAuth(new URL(`${first.server.url}/mcp`), PIN);
    const echo = async (
      client: Client,
      text: string,
    ) => ((await client.callTool({ name: "run_command", arguments: { command: `echo ${text}` } }))
      .structuredContent as { code: string; stdout: string });
    assert.equal((await echo(connection.client, "at-first")).stdout, "at-first\n");

    // The same provider (its token) at the second server: signed with the
    // shared secret, for a client the shared registry knows.
    const transport = new StreamableHTTPClientTransport(new URL(`${second.server.url}/mcp`), {
      authProvider: connection.provider,
    });
    const atSecond = new Client({ name: "replica", version: "0" });
    await atSecond.connect(transport);
    assert.equal((await echo(atSecond, "at-second")).stdout, "at-second\n");

    // Revoked once in the shared state dir: refused by both.
    const tokens = await connection.provider.tokens();
    const clientInfo = await connection.provider.clientInformation();
    assert.ok(tokens && clientInfo);
    const revoked = await new ClientRegistry(first.policy.stateDir!).revokeClient(
      clientInfo.client_id,
      Math.floor(Date.now() / 1000),
    );
    assert.ok(revoked.ok);
    for (const replica of [first, second]) {
      const response: Response = await fetch(`${replica.server.url}/mcp`, {
        method: "POST",
        headers: {
          authorization: `Bearer ${tokens.access_token}`,
          "content-type": "application/json",
          accept: "application/json, text/event-stream",
        },
        body: JSON.stringify({ jsonrpc: "2.0", id: 9, method: "tools/list" }),
      });
      assert.equal(response.status, 401, replica.server.url);
      await response.body?.cancel();
    }
    await atSecond.close().catch(() => {});
    await connection.close().catch(() => {});
  } finally {
    await second.close();
    await first.close();
  }
  try {
    const bytes = await Deno.readFile(first.policy.auditLog);
    const report = verifyAuditChain(bytes);
    assert.ok(report.ok, JSON.stringify(report));
    const records = new TextDecoder().decode(bytes).split("\n").filter((l) => l !== "")
      .map((l) => JSON.parse(l));
    const writers = new Set(records.map((record) => record.writer));
    assert.equal(writers.size, 2, "both servers wrote to the one chain");
    assert.ok(records.some((r) => r.command_raw === "echo at-first"));
    assert.ok(records.some((r) => r.command_raw === "echo at-second"));
    // Each server records that it applied the revocation.
    assert.equal(
      records.filter((r) => r.event === "client_revocation_applied").length,
      2,
    );
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});
