/**
 * Sessions and concurrency: bounded session tables (per client, per source
 * address for unauthenticated callers, and overall; a cap answers with a
 * JSON-RPC error naming it, never with "Session not found"),
 * idle expiry, the per-client command cap over HTTP (the client over its cap
 * waits in the queue while another client runs at once), and shutdown that ends sessions
 * and lets the context write the outcome of a running command.
 */
import assert from "node:assert/strict";
import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
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

async function initializeRaw(url: URL): Promise<Response> {
  return await fetch(url, {
    method: "POST",
    headers: { ...MCP_POST_HEADERS },
    body: initializeBody(),
  });
}

Deno.test("a source at its session cap gets 429 naming the limit; its live sessions keep working", async () => {
  const sessionLimits = { maxSessions: 10, maxPerClient: 5, maxPerSource: 2, idleMs: 60_000 };
  await withHttp({ auth: { mode: "none" }, sessionLimits }, async (h) => {
    const first = await initialize(h.mcpUrl);
    const second = await initialize(h.mcpUrl);
    assert.equal(first.status, 200);
    assert.equal(second.status, 200);
    const refused = await initializeRaw(h.mcpUrl);
    assert.equal(refused.status, 429);
    assert.equal(refused.headers.get("retry-after"), "30");
    assert.equal(refused.headers.get("mcp-session-id"), null);
    const body = await refused.json() as {
      jsonrpc: string;
      error: { code: number; message: string; data: { limit: string; max: number } };
    };
    assert.equal(body.jsonrpc, "2.0");
    assert.equal(body.error.code, -32000);
    assert.deepEqual(body.error.data, { limit: "max_sessions_per_source", max: 2 });
    assert.match(body.error.message, /max_sessions_per_source = 2/);
    // Nothing was evicted: both sessions still answer, neither gets 404.
    assert.equal(await ping(h.mcpUrl, first.sessionId as string), 200);
    assert.equal(await ping(h.mcpUrl, second.sessionId as string), 200);
    const limits = await h.events("session_limit");
    assert.equal(limits.length, 1);
    assert.equal(limits[0]?.limit, "max_sessions_per_source");
    assert.equal(limits[0]?.remote_addr, "127.0.0.1");
    // Ending a session frees its place.
    const ended = await fetch(h.mcpUrl, {
      method: "DELETE",
      headers: {
        "mcp-session-id": first.sessionId as string,
        "mcp-protocol-version": "2025-11-25",
      },
    });
    await ended.body?.cancel();
    assert.equal((await initialize(h.mcpUrl)).status, 200);
  });
});

Deno.test("32 real SDK clients without auth work at once from one local address", async () => {
  await withHttp({ auth: { mode: "none" } }, async (h) => {
    const clients: Client[] = [];
    try {
      for (let i = 0; i < 32; i++) {
        const client = new Client({ name: `local-${i}`, version: "0" });
        await client.connect(new StreamableHTTPClientTransport(h.mcpUrl));
        clients.push(client);
      }
      // All 32 sessions are open at once; each is served in turn (calls beyond
      // limits.max_concurrent at the same instant would be BUSY, by design).
      const verdicts: string[] = [];
      for (const [i, client] of clients.entries()) {
        const result = await client.callTool({
          name: "explain_command",
          arguments: { command: `echo ${i}` },
        });
        verdicts.push((result.structuredContent as { code: string }).code);
      }
      assert.deepEqual(verdicts, Array(32).fill("OK"));
      // The first client is still served after the 32nd connected.
      assert.deepEqual(await clients[0]?.ping(), {});
      assert.equal((await h.events("session_limit")).length, 0);
    } finally {
      await Promise.all(clients.map((client) => client.close()));
    }
  });
});

Deno.test("the per-client cap counts one OAuth client's sessions and refuses its extra one with 429", async () => {
  const sessionLimits = { maxSessions: 10, maxPerClient: 1, idleMs: 60_000 };
  await withHttp({ sessionLimits }, async (h) => {
    const alice = await connectWithOAuth(h.mcpUrl, PIN);
    try {
      // Alice's own second session (same token) passes her cap.
      const again = new Client({ name: "alice-2", version: "0" });
      await assert.rejects(
        again.connect(
          new StreamableHTTPClientTransport(h.mcpUrl, { authProvider: alice.provider }),
        ),
        /429|max_sessions_per_client/,
      );
      // Another client is counted on its own.
      const bob = await connectWithOAuth(h.mcpUrl, PIN);
      try {
        assert.deepEqual(await bob.client.ping(), {});
      } finally {
        await bob.close();
      }
      assert.deepEqual(await alice.client.ping(), {});
      const limits = await h.events("session_limit");
      assert.equal(limits[0]?.limit, "max_sessions_per_client");
      assert.equal(limits[0]?.client_id, alice.provider.clientInformation()?.client_id);
    } finally {
      await alice.close();
    }
  });
});

Deno.test("a full session table refuses a new session with 503 naming max_sessions", async () => {
  const sessionLimits = { maxSessions: 1, maxPerClient: 5, idleMs: 60_000 };
  await withHttp({ sessionLimits }, async (h) => {
    const alice = await connectWithOAuth(h.mcpUrl, PIN);
    try {
      const mallory = connectWithOAuth(h.mcpUrl, PIN);
      await assert.rejects(mallory, /503|max_sessions/);
      assert.deepEqual(await alice.client.ping(), {});
      assert.equal((await h.events("session_limit"))[0]?.limit, "max_sessions");
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

Deno.test("the per-client command cap queues a client's second call over HTTP while another client runs at once", async () => {
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
        const ended: string[] = [];
        const track = (name: string, call: Promise<string>) =>
          call.then((code) => {
            ended.push(name);
            return code;
          });
        const [aliceAgain, bobToo, first] = await Promise.all([
          track("aliceAgain", run(alice, "true")),
          track("bob", run(bob, "true")),
          track("long", long),
        ]);
        assert.deepEqual([aliceAgain, bobToo, first], ["OK", "OK", "OK"]);
        // Alice's second call could not start before her first ended (her cap is
        // 1); Bob's call did not wait behind her.
        assert.ok(ended.indexOf("aliceAgain") > ended.indexOf("long"), ended.join());
        assert.ok(ended.indexOf("bob") < ended.indexOf("long"), ended.join());
        const queued = (await h.records()).filter((r) =>
          r.kind === "attempt" && r.verdict === "allow" && typeof r.queued_ms === "number"
        );
        assert.equal(queued.length, 1, "exactly Alice's second call waited");
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
