/**
 * The same era-equivalence script over HTTP with OAuth on: a token from the
 * built-in authorization server's real flow (shell and audit scopes), the
 * SDK v2 client in the 2025 era (with its session) and in the stateless
 * 2026-07-28 era; every tool and every one-call refusal give the same codes,
 * and nothing refused runs.
 */
import assert from "node:assert/strict";
import { type Client, StreamableHTTPClientTransport } from "@modelcontextprotocol/client";
import { PIN, withHttp } from "../transport/http/_harness.ts";
import { connectWithOAuth } from "../transport/http/_oauth.ts";
import { v2Client } from "./_v2_clients.ts";
import type { Era } from "./_v2_clients.ts";
import { assertScriptCodes, eraScript } from "./_era_script.ts";
import { openCanary } from "../_helpers/jail.ts";

async function connect(mcpUrl: URL, era: Era, token: string): Promise<Client> {
  const client = v2Client(era);
  await client.connect(
    new StreamableHTTPClientTransport(mcpUrl, {
      requestInit: { headers: { authorization: `Bearer ${token}` } },
    }),
  );
  return client;
}

Deno.test("http with OAuth, both eras: every tool and every one-call refusal give the same codes through the v2 client", async () => {
  await withHttp({
    allow: ["echo", "sleep", "cat", "ls"],
    limits: { maxOutputBytes: 64 },
    policy: { auditExposeToModel: true },
  }, async (h) => {
    const oauth = await connectWithOAuth(h.mcpUrl, PIN, "shell:read shell:execute audit:read");
    const token = oauth.provider.tokens()?.access_token;
    await oauth.close();
    assert.ok(token !== undefined);
    const canary = await openCanary(h.dir, "outside-canary", "untouched");
    const codes: Record<string, string>[] = [];
    for (const era of ["2025", "2026-07-28"] as const) {
      const client = await connect(h.mcpUrl, era, token);
      try {
        codes.push(await eraScript(client, canary));
      } finally {
        await client.close();
      }
    }
    assert.deepEqual(codes[1], codes[0]);
    assertScriptCodes(codes[0]!);
    assert.match(codes[0]!.tools!, /create_file_link/, "over HTTP the link tools are listed too");
    const eras = new Set(
      (await h.records()).filter((r) => r.kind === "attempt").map((r) => r.protocol_era),
    );
    assert.ok(eras.has("2026-07-28"), [...eras].join(","));
  });
});
