/**
 * `audit_tail` over HTTP with OAuth, through the real SDK client: each client
 * sees only the records that name its own client id; a token without
 * `audit:read` is refused by the HTTP layer (403) and the refusal is audited;
 * `audit:full` (asked for by name) sees every client's records.
 *
 * The harness runs commands with `[sandbox] mode = "none"`: what is under
 * test is whose audit records a caller can read, not containment.
 */
import assert from "node:assert/strict";
import { PIN, withHttp } from "../transport/http/_harness.ts";
import { auditTailTool } from "../../src/tools/audit_tail.ts";
import {
  connectWithOAuth,
  type OAuthConnection,
  RecordingProvider,
} from "../transport/http/_oauth.ts";

const FAKE_TOKEN = "ghp_abcdefghijklmnopqrstuvwxyz0123456789";

interface Tail {
  ok: boolean;
  code: string;
  scope: string;
  records: Record<string, unknown>[];
}

async function tail(conn: OAuthConnection, limit = 50): Promise<Tail> {
  const result = await conn.client.callTool({ name: "audit_tail", arguments: { limit } });
  return result.structuredContent as unknown as Tail;
}

async function echo(conn: OAuthConnection, text: string): Promise<void> {
  const ran = await conn.client.callTool({
    name: "run_command",
    arguments: { command: `echo ${text}` },
  });
  assert.equal((ran.structuredContent as { code: string }).code, "OK");
}

/**
 * An operator's client: registered by hand for the scopes it names (an SDK
 * client registers what the 401 challenge lists, which never holds audit:full).
 */
async function connectRegistered(
  url: string,
  mcpUrl: URL,
  scope: string,
): Promise<OAuthConnection> {
  const provider = new RecordingProvider(scope);
  const registered = await fetch(`${url}/register`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify(provider.clientMetadata),
  });
  assert.equal(registered.status, 201);
  provider.saveClientInformation(await registered.json());
  return await connectWithOAuth(mcpUrl, PIN, scope, provider);
}

function clientIdOf(conn: OAuthConnection): string {
  const id = conn.provider.clientInformation()?.client_id;
  assert.ok(id !== undefined);
  return id;
}

Deno.test("audit_tail over HTTP: two OAuth clients each see only their own records, redacted", async () => {
  await withHttp({ policy: { auditExposeToModel: true } }, async (h) => {
    assert.equal(h.context.executor.describe().mode, "none");
    // No scope of their own: SDK clients take the challenge's, which names
    // audit:read because the operator exposed the tool.
    const alice = await connectWithOAuth(h.mcpUrl, PIN);
    const bob = await connectWithOAuth(h.mcpUrl, PIN);
    const granted = alice.provider.tokens()?.scope ?? "";
    assert.deepEqual(granted.split(" ").sort(), ["audit:read", "shell:execute", "shell:read"]);
    try {
      const { tools } = await alice.client.listTools();
      assert.ok(tools.some((tool: { name: string }) => tool.name === "audit_tail"));
      await echo(alice, `alice ${FAKE_TOKEN}`);
      await echo(bob, "bob-only-command");
      await echo(alice, "alice-second");

      const seen = await tail(alice);
      assert.equal(seen.ok, true);
      assert.equal(seen.scope, "own");
      const aliceId = clientIdOf(alice);
      assert.ok(seen.records.length >= 6, JSON.stringify(seen.records));
      assert.ok(seen.records.every((record) => record.client_id === aliceId));
      const text = JSON.stringify(seen.records);
      assert.ok(!text.includes("bob-only-command"));
      assert.ok(!text.includes(FAKE_TOKEN));
      assert.match(text, /alice \[REDACTED:github_token\]/);
      // Neither the HTTP layer's record of this call nor its own audit_read.
      assert.ok(!seen.records.some((record) => record.tool === "audit_tail"));
      assert.ok(!seen.records.some((record) => record.event === "audit_read"));
      const attempts = seen.records.filter((record) => record.kind === "attempt");
      assert.equal(attempts.length, 2);
      assert.deepEqual(attempts[0]!.argv, ["echo", "alice", "[REDACTED:github_token]"]);
      assert.deepEqual(attempts[1]!.argv, ["echo", "alice-second"]);

      const bobSeen = await tail(bob);
      const bobText = JSON.stringify(bobSeen.records);
      assert.ok(bobText.includes("bob-only-command"));
      assert.ok(!bobText.includes("alice"), "bob never sees alice's records");
      assert.ok(bobSeen.records.every((record) => record.client_id === clientIdOf(bob)));

      // The log holds both audit_tail calls, each naming its caller.
      const reads = await h.events("audit_read");
      assert.deepEqual(
        reads.map((record) => [record.client_id, record.scope, record.result_code]),
        [
          [aliceId, "own", "OK"],
          [clientIdOf(bob), "own", "OK"],
        ],
      );
    } finally {
      await alice.close();
      await bob.close();
    }
  });
});

Deno.test("audit_tail over HTTP: a token without audit:read is refused with 403 and audited; audit:full sees everyone", async () => {
  await withHttp({ policy: { auditExposeToModel: true } }, async (h) => {
    const plain = await connectWithOAuth(h.mcpUrl, PIN, "shell:read shell:execute");
    const operator = await connectRegistered(h.url, h.mcpUrl, "shell:read audit:read audit:full");
    try {
      await echo(plain, "plain-client-command");
      await assert.rejects(() => tail(plain));
      const denied = await h.events("scope_denied");
      assert.deepEqual(denied.map((record) => [record.client_id, record.scope]), [
        [clientIdOf(plain), "audit:read"],
      ]);
      assert.equal((await h.events("audit_read")).length, 0, "the tool never ran");

      const all = await tail(operator);
      assert.equal(all.ok, true);
      assert.equal(all.scope, "all");
      const text = JSON.stringify(all.records);
      assert.ok(text.includes("plain-client-command"), "audit:full reads other clients' records");
      assert.ok(all.records.some((record) => record.client_id === clientIdOf(plain)));
    } finally {
      await plain.close();
      await operator.close();
    }
  });
});

Deno.test("audit_tail checks audit:read itself too, should a route ever skip the HTTP layer's check", async () => {
  await withHttp({ policy: { auditExposeToModel: true } }, async (h) => {
    const caller = {
      transport: "http" as const,
      clientId: "client-without-audit-read",
      scopes: new Set(["shell:read", "shell:execute"] as const),
    };
    const refused = await auditTailTool(h.context, caller, { limit: 5 }, 7);
    assert.equal(refused.ok, false);
    assert.equal(refused.code, "SCOPE_DENIED");
    assert.deepEqual(refused.records, []);
    const reads = await h.events("audit_read");
    assert.deepEqual(reads.map((record) => [record.client_id, record.result_code]), [
      ["client-without-audit-read", "SCOPE_DENIED"],
    ]);
  });
});
