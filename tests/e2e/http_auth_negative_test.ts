/**
 * Bearer-token attacks through real HTTP against a real server: each refused
 * with its exact status and error, audited with its reason, and never reaching
 * a tool (a canary proves nothing ran). Tokens are forged with the server's
 * own secret from `state_dir`, so only the property under test is wrong.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { SignJWT } from "jose";
import { ClientRegistry } from "../../src/auth/mod.ts";
import {
  type HttpHarness,
  initializeBody,
  MCP_POST_HEADERS,
  PIN,
  readRpc,
  withHttp,
} from "../transport/http/_harness.ts";
import { connectWithOAuth } from "../transport/http/_oauth.ts";

interface Claims {
  iss?: string;
  aud?: string;
  sub?: string;
  scope?: string;
  client_id?: string;
  iat?: number;
  exp?: number;
  jti?: string;
}

async function forge(h: HttpHarness, clientId: string, change: Partial<Claims> = {}) {
  const key = await Deno.readFile(join(h.stateDir, "oauth-jwt-secret"));
  const now = Math.floor(Date.now() / 1000);
  const claims: Claims = {
    iss: h.url,
    aud: `${h.url}/mcp`,
    sub: clientId,
    client_id: clientId,
    scope: "shell:read shell:execute",
    iat: now,
    exp: now + 600,
    jti: crypto.randomUUID(),
    ...change,
  };
  return await new SignJWT({ ...claims })
    .setProtectedHeader({ alg: "HS256", typ: "at+jwt" })
    .sign(key);
}

/** POSTs `initialize` to /mcp with `authorization`. */
async function postInit(h: HttpHarness, authorization: string | null, url = h.mcpUrl) {
  const headers: Record<string, string> = { ...MCP_POST_HEADERS };
  if (authorization !== null) headers.authorization = authorization;
  const response = await fetch(url, { method: "POST", headers, body: initializeBody() });
  const body = response.status === 200 ? await readRpc(response) : await response.json();
  return { response, body };
}

function b64url(value: unknown): string {
  return btoa(JSON.stringify(value)).replaceAll("+", "-").replaceAll("/", "_").replace(/=+$/, "");
}

Deno.test("bearer negatives over HTTP: each refused with its exact status, error and audit reason", async () => {
  await withHttp({}, async (h) => {
    const conn = await connectWithOAuth(h.mcpUrl, PIN);
    const clientId = conn.provider.clientInformation()?.client_id as string;
    await conn.close();
    const good = await forge(h, clientId);
    // The control: the forged-but-correct token is accepted, so each case below
    // fails for its one changed property only.
    const control = await postInit(h, `Bearer ${good}`);
    assert.equal(control.response.status, 200);

    const now = Math.floor(Date.now() / 1000);
    const [header, payload, signature] = good.split(".") as [string, string, string];
    const tamperedPayload = b64url({
      ...JSON.parse(atob(payload.replaceAll("-", "+").replaceAll("_", "/"))),
      scope: "shell:read shell:execute",
      sub: "someone-else",
    });
    const flipped = signature.slice(0, -2) + (signature.at(-2) === "A" ? "B" : "A") +
      signature.slice(-1);
    const cases: [string, string | null, number, string | null, string | null][] = [
      ["missing", null, 401, "invalid_token", null],
      ["wrong (garbage)", "Bearer not-a-jwt", 401, "invalid_token", "malformed_token"],
      ["not Bearer", `Basic ${btoa("a:b")}`, 401, "invalid_token", "malformed_header"],
      [
        "expired",
        `Bearer ${await forge(h, clientId, { iat: now - 7200, exp: now - 3600 })}`,
        401,
        "invalid_token",
        "expired",
      ],
      [
        "other audience",
        `Bearer ${await forge(h, clientId, { aud: "https://other.example/mcp" })}`,
        401,
        "invalid_token",
        "wrong_audience",
      ],
      [
        "other issuer",
        `Bearer ${await forge(h, clientId, { iss: "https://evil.example" })}`,
        401,
        "invalid_token",
        "wrong_issuer",
      ],
      [
        "alg none",
        `Bearer ${b64url({ alg: "none", typ: "at+jwt" })}.${payload}.`,
        401,
        "invalid_token",
        "wrong_algorithm",
      ],
      [
        "tampered payload",
        `Bearer ${header}.${tamperedPayload}.${signature}`,
        401,
        "invalid_token",
        "bad_signature",
      ],
      [
        "tampered signature",
        `Bearer ${header}.${payload}.${flipped}`,
        401,
        "invalid_token",
        "bad_signature",
      ],
    ];
    // Refusals before authentication are aggregated: the first of each reason
    // from a source is written, repeats are counted (refusals_aggregated).
    const seen = new Set<string | null>();
    for (const [name, authorization, status, error, reason] of cases) {
      const before = (await h.events("bearer_invalid")).length;
      const { response, body } = await postInit(h, authorization);
      assert.equal(response.status, status, name);
      assert.equal(body?.error, error, name);
      assert.match(
        response.headers.get("www-authenticate") ?? "",
        /^Bearer resource_metadata="/,
        name,
      );
      const audited = await h.events("bearer_invalid");
      if (authorization === null) {
        assert.equal(audited.length, before, `${name}: a missing token is not an incident`);
      } else if (seen.has(reason)) {
        assert.equal(audited.length, before, `${name}: a repeated reason is counted, not written`);
      } else {
        seen.add(reason);
        assert.equal(audited.length, before + 1, name);
        if (reason !== null) assert.equal(audited.at(-1)?.reason, reason, name);
        assert.ok(!JSON.stringify(audited.at(-1)).includes(authorization.slice(7)), name);
      }
    }

    // Token in the query string: refused even though the token is valid.
    const query = new URL(h.mcpUrl);
    query.searchParams.set("access_token", good);
    const inQuery = await postInit(h, null, query);
    assert.equal(inQuery.response.status, 400);
    assert.equal(inQuery.body?.error, "invalid_request");
    const inQueryWithHeader = await postInit(h, `Bearer ${good}`, query);
    assert.equal(inQueryWithHeader.response.status, 400);
    const rejected = await h.events("bearer_invalid");
    assert.equal(rejected.at(-1)?.reason, "token_in_query");
    assert.ok(!JSON.stringify(await h.records()).includes(good), "the token is never logged");
  });
});

Deno.test("a token with only shell:read gets 403 insufficient_scope for run_command, and nothing runs", async () => {
  await withHttp({}, async (h) => {
    const conn = await connectWithOAuth(h.mcpUrl, PIN, "shell:read");
    try {
      const explained = await conn.client.callTool({
        name: "explain_command",
        arguments: { command: "touch canary" },
      });
      assert.equal((explained.structuredContent as { code: string }).code, "OK");

      const token = (await conn.provider.tokens())?.access_token as string;
      const sessionId = conn.transport.sessionId as string;
      const response = await fetch(h.mcpUrl, {
        method: "POST",
        headers: {
          ...MCP_POST_HEADERS,
          authorization: `Bearer ${token}`,
          "mcp-session-id": sessionId,
          "mcp-protocol-version": "2025-11-25",
        },
        body: JSON.stringify({
          jsonrpc: "2.0",
          id: 7,
          method: "tools/call",
          params: { name: "run_command", arguments: { command: "touch canary" } },
        }),
      });
      const body = await response.json();
      assert.equal(response.status, 403);
      assert.equal(body.error, "insufficient_scope");
      const challenge = response.headers.get("www-authenticate") ?? "";
      assert.match(challenge, /error="insufficient_scope"/);
      assert.match(challenge, /scope="shell:execute"/);

      // A batch that hides run_command behind an allowed call is refused whole.
      const batch = await fetch(h.mcpUrl, {
        method: "POST",
        headers: {
          ...MCP_POST_HEADERS,
          authorization: `Bearer ${token}`,
          "mcp-session-id": sessionId,
          "mcp-protocol-version": "2025-11-25",
        },
        body: JSON.stringify([
          { jsonrpc: "2.0", id: 8, method: "tools/call", params: { name: "describe_policy" } },
          {
            jsonrpc: "2.0",
            id: 9,
            method: "tools/call",
            params: { name: "run_command", arguments: { command: "touch canary" } },
          },
        ]),
      });
      await batch.body?.cancel();
      assert.equal(batch.status, 403);

      // The SDK client sees the refusal as an error too.
      await assert.rejects(() =>
        conn.client.callTool({ name: "run_command", arguments: { command: "touch canary" } })
      );
      await assert.rejects(() => Deno.stat(join(h.jail, "canary")), Deno.errors.NotFound);
      const denied = await h.events("scope_denied");
      assert.ok(denied.length >= 2);
      assert.equal(denied[0]?.tool, "run_command");
      assert.equal(denied[0]?.scope, "shell:execute");
      const attempts = (await h.records()).filter((r) =>
        r.kind === "attempt" && r.tool === "run_command"
      );
      assert.deepEqual(attempts, [], "a refused call never reaches the tool");
    } finally {
      await conn.close();
    }
  });
});

Deno.test("a session id is not authentication: another client presenting it gets 404", async () => {
  await withHttp({}, async (h) => {
    const alice = await connectWithOAuth(h.mcpUrl, PIN);
    const mallory = await connectWithOAuth(h.mcpUrl, PIN);
    try {
      const aliceSession = alice.transport.sessionId as string;
      const malloryToken = (await mallory.provider.tokens())?.access_token as string;
      const headers = {
        ...MCP_POST_HEADERS,
        authorization: `Bearer ${malloryToken}`,
        "mcp-session-id": aliceSession,
        "mcp-protocol-version": "2025-11-25",
      };
      const call = await fetch(h.mcpUrl, {
        method: "POST",
        headers,
        body: JSON.stringify({
          jsonrpc: "2.0",
          id: 3,
          method: "tools/call",
          params: { name: "run_command", arguments: { command: "touch canary" } },
        }),
      });
      const body = await call.json();
      assert.equal(call.status, 404);
      assert.deepEqual(body, {
        jsonrpc: "2.0",
        error: { code: -32001, message: "Session not found" },
        id: null,
      });
      // Same answer as an id that never existed: no oracle.
      const unknown = await fetch(h.mcpUrl, {
        method: "POST",
        headers: { ...headers, "mcp-session-id": crypto.randomUUID() },
        body: JSON.stringify({ jsonrpc: "2.0", id: 4, method: "ping" }),
      });
      assert.equal(unknown.status, 404);
      assert.deepEqual(await unknown.json(), body);
      // Nor can Mallory open Alice's SSE stream or end her session.
      const get = await fetch(h.mcpUrl, {
        headers: { ...headers, accept: "text/event-stream" },
      });
      await get.body?.cancel();
      assert.equal(get.status, 404);
      const del = await fetch(h.mcpUrl, { method: "DELETE", headers });
      await del.body?.cancel();
      assert.equal(del.status, 404);

      await assert.rejects(() => Deno.stat(join(h.jail, "canary")), Deno.errors.NotFound);
      const refused = await h.events("session_refused");
      const malloryId = mallory.provider.clientInformation()?.client_id;
      assert.equal(refused.length, 3);
      assert.ok(refused.every((e) => e.client_id === malloryId));
      // Alice's session still works.
      const ping = await alice.client.ping();
      assert.deepEqual(ping, {});
    } finally {
      await alice.close();
      await mallory.close();
    }
  });
});

Deno.test("revoking a client (as `htmcp auth revoke` does) stops its open session at the next request", async () => {
  await withHttp({}, async (h) => {
    const conn = await connectWithOAuth(h.mcpUrl, PIN);
    try {
      const clientId = conn.provider.clientInformation()?.client_id as string;
      const before = await conn.client.callTool({
        name: "run_command",
        arguments: { command: "echo before" },
      });
      assert.equal((before.structuredContent as { code: string }).code, "OK");
      const revoked = await new ClientRegistry(h.stateDir).revokeClient(
        clientId,
        Math.floor(Date.now() / 1000),
      );
      assert.equal(revoked.ok, true);
      await assert.rejects(() =>
        conn.client.callTool({ name: "run_command", arguments: { command: "touch canary" } })
      );
      await assert.rejects(() => Deno.stat(join(h.jail, "canary")), Deno.errors.NotFound);
      const refused = await h.events("bearer_invalid");
      assert.equal(refused.at(-1)?.reason, "client_revoked");
      assert.equal(refused.at(-1)?.client_id, clientId);
    } finally {
      await conn.close();
    }
  });
});
