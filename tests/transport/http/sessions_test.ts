/**
 * Sessions and concurrency: bounded session tables (per client and overall),
 * idle expiry, the per-client command cap over HTTP (BUSY for the client over
 * its cap while another client still runs), and shutdown that ends sessions
 * and lets the context write the outcome of a running command.
 */
import assert from "node:assert/strict";
import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { CallRegistry } from "../../../src/server/mod.ts";
import { SessionTable } from "../../../src/transport/http/sessions.ts";
import { TrackedHttpTransport } from "../../../src/transport/http/tracked_transport.ts";
import { initializeBody, MCP_POST_HEADERS, PIN, withHttp } from "./_harness.ts";
import { connectWithOAuth } from "./_oauth.ts";

async function initialize(url: URL): Promise<{ status: number; sessionId: string | null }> {
  const response = await fetch(url, {
    method: "POST",
    headers: { ...MCP_POST_HEADERS },
    body: initializeBody(),
  });
  await response.body?.cancel();
  return { status: response.status, sessionId: response.headers.get("mcp-session-id") };
}

async function ping(url: URL, sessionId: string): Promise<number> {
  const response = await fetch(url, {
    method: "POST",
    headers: {
      ...MCP_POST_HEADERS,
      "mcp-session-id": sessionId,
      "mcp-protocol-version": "2025-11-25",
    },
    body: JSON.stringify({ jsonrpc: "2.0", id: 5, method: "ping" }),
  });
  await response.body?.cancel();
  return response.status;
}

Deno.test("a client at its session cap loses its least recently used session, not a new one", async () => {
  const sessionLimits = { maxSessions: 10, maxPerClient: 2, idleMs: 60_000 };
  await withHttp({ auth: { mode: "none" }, sessionLimits }, async (h) => {
    const first = await initialize(h.mcpUrl);
    const second = await initialize(h.mcpUrl);
    assert.equal(await ping(h.mcpUrl, first.sessionId as string), 200);
    // `second` is now the least recently used.
    const third = await initialize(h.mcpUrl);
    assert.equal(third.status, 200);
    assert.equal(await ping(h.mcpUrl, second.sessionId as string), 404);
    assert.equal(await ping(h.mcpUrl, first.sessionId as string), 200);
    assert.equal(await ping(h.mcpUrl, third.sessionId as string), 200);
  });
});

Deno.test("a full session table refuses a new session with 503 too_many_sessions", async () => {
  const sessionLimits = { maxSessions: 1, maxPerClient: 5, idleMs: 60_000 };
  await withHttp({ sessionLimits }, async (h) => {
    const alice = await connectWithOAuth(h.mcpUrl, PIN);
    try {
      const mallory = connectWithOAuth(h.mcpUrl, PIN);
      await assert.rejects(mallory, /too_many_sessions|503/);
      assert.deepEqual(await alice.client.ping(), {});
    } finally {
      await alice.close();
    }
  });
});

Deno.test("SessionTable closes sessions idle longer than the limit, and only those", async () => {
  const table = new SessionTable({ maxSessions: 10, maxPerClient: 10, idleMs: 1_000 });
  const make = async (id: string, lastSeen: number) => {
    const transport = new TrackedHttpTransport({
      sessionIdGenerator: () => id,
    });
    const server = new McpServer({ name: "t", version: "0" });
    await server.connect(transport);
    table.add({ id, owner: "c", transport, server, calls: new CallRegistry(), lastSeen });
    return transport;
  };
  const now = performance.now();
  const stale = await make("stale", now - 5_000);
  await make("fresh", now);
  let staleClosed = false;
  const previous = stale.onclose;
  stale.onclose = () => {
    staleClosed = true;
    previous?.();
  };
  assert.equal(await table.closeIdle(now), 1);
  assert.equal(staleClosed, true);
  assert.deepEqual(table.lookup("stale", "c"), { ok: false, reason: "unknown" });
  assert.equal(table.lookup("fresh", "c").ok, true);
  assert.deepEqual(table.lookup("fresh", "other"), { ok: false, reason: "other_client" });
  await table.closeAll();
  assert.equal(table.size, 0);
});

Deno.test("the per-client command cap answers BUSY over HTTP while another client still runs", async () => {
  await withHttp(
    { http: { maxConcurrentPerClient: 1 }, limits: { maxConcurrent: 4 } },
    async (h) => {
      const alice = await connectWithOAuth(h.mcpUrl, PIN);
      const bob = await connectWithOAuth(h.mcpUrl, PIN);
      try {
        const run = (conn: typeof alice, command: string) =>
          conn.client.callTool({ name: "run_command", arguments: { command } })
            .then((r) => (r.structuredContent as { code: string }).code);
        const long = run(alice, "sleep 0.6");
        // Wait until Alice's command is really running (its attempt is on disk).
        for (let i = 0; i < 100; i++) {
          const attempts = (await h.records()).filter((r) => r.kind === "attempt");
          if (attempts.some((r) => r.verdict === "allow")) break;
          await new Promise((resolve) => setTimeout(resolve, 10));
        }
        const [aliceAgain, bobToo] = await Promise.all([run(alice, "true"), run(bob, "true")]);
        assert.equal(aliceAgain, "BUSY");
        assert.equal(bobToo, "OK");
        assert.equal(await long, "OK");
      } finally {
        await alice.close();
        await bob.close();
      }
    },
  );
});

Deno.test("shutdown ends open sessions and the context writes the killed command's outcome", async () => {
  await withHttp({ auth: { mode: "none" } }, async (h) => {
    const { Client } = await import("@modelcontextprotocol/sdk/client/index.js");
    const { StreamableHTTPClientTransport } = await import(
      "@modelcontextprotocol/sdk/client/streamableHttp.js"
    );
    const client = new Client({ name: "stopper", version: "0" });
    await client.connect(new StreamableHTTPClientTransport(h.mcpUrl));
    const pending = client.callTool({ name: "run_command", arguments: { command: "sleep 30" } })
      .catch((error: unknown) => error);
    for (let i = 0; i < 200; i++) {
      const attempts = (await h.records()).filter((r) => r.kind === "attempt");
      if (attempts.length > 0) break;
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
    const started = performance.now();
    await h.server.shutdown();
    await h.context.close("test shutdown");
    await h.server.finished;
    assert.ok(performance.now() - started < 5_000, "sleep 30 was killed, not awaited");
    // The stream ended without an answer; closing the client settles the call.
    await client.close().catch(() => {});
    await pending;
    const records = await h.records();
    const outcome = records.find((r) => r.kind === "outcome");
    assert.ok(outcome !== undefined, "the outcome was written");
    assert.notEqual(outcome.code, "OK");
    assert.equal(records.at(-1)?.event, "server_stop");
    // After shutdown nothing answers.
    await assert.rejects(() => fetch(h.mcpUrl, { method: "POST", body: "{}" }));
  });
});
