/**
 * Refusals before authentication cost bounded audit space. Regression: each
 * forged-token or foreign-Origin request wrote one fdatasync'd record, so a
 * flood filled the log at megabytes per second and then every authorized
 * command was AUDIT_UNAVAILABLE. Now: one record per source and reason per
 * interval plus one count, a budget of pairs per interval, and authorized
 * calls audited as before.
 */
import assert from "node:assert/strict";
import { assertAcknowledgedAudited, assertAuditVerifies } from "../../e2e/_http_server.ts";
import { MCP_POST_HEADERS, PIN, startHttp } from "./_harness.ts";
import { connectWithOAuth } from "./_oauth.ts";

const FLOOD = 1_500;

async function flood(url: URL, headers: Record<string, string>): Promise<Map<number, number>> {
  const statuses = new Map<number, number>();
  // Bounded: FLOOD requests, 16 at a time.
  for (let i = 0; i < FLOOD; i += 16) {
    const batch = Array.from({ length: Math.min(16, FLOOD - i) }, async () => {
      const response = await fetch(url, {
        method: "POST",
        headers: { ...MCP_POST_HEADERS, ...headers },
        body: "{}",
      });
      await response.body?.cancel();
      statuses.set(response.status, (statuses.get(response.status) ?? 0) + 1);
    });
    await Promise.all(batch);
  }
  return statuses;
}

Deno.test("a flood of forged tokens and foreign Origins writes one record per source and reason per interval, and authorized calls are still audited", async () => {
  const h = await startHttp({});
  try {
    const before = (await h.records()).length;
    const bytesBefore = (await Deno.stat(h.auditPath)).size;
    const started = performance.now();
    const forged = await flood(h.mcpUrl, { authorization: "Bearer forged.token.value" });
    const foreign = await flood(h.mcpUrl, { origin: "https://evil.example" });
    const seconds = (performance.now() - started) / 1000;
    assert.deepEqual([...forged.keys()], [401]);
    assert.deepEqual([...foreign.keys()], [403]);
    const during = (await h.records()).slice(before);
    const grown = (await Deno.stat(h.auditPath)).size - bytesBefore;
    console.log(
      `${2 * FLOOD} refused requests in ${seconds.toFixed(1)} s (${
        (2 * FLOOD / seconds).toFixed(0)
      }/s) from 127.0.0.1: ${during.length} records (${
        (during.length / seconds).toFixed(2)
      } records/s for this source), log grew ${grown} bytes`,
    );
    assert.equal(during.filter((r) => r.event === "bearer_invalid").length, 1);
    assert.equal(during.filter((r) => r.event === "http_forbidden").length, 1);
    assert.ok(during.length <= 4, `records written during the flood: ${during.length}`);

    // An authorized call is audited in full, flood or not.
    const word = `authorized-${crypto.randomUUID()}`;
    const connection = await connectWithOAuth(h.mcpUrl, PIN);
    try {
      const result = await connection.client.callTool({
        name: "run_command",
        arguments: { command: `echo ${word}` },
      });
      assert.equal((result.structuredContent as { stdout: string }).stdout, `${word}\n`);
    } finally {
      await connection.close();
    }
    await h.server.shutdown();
    const records = await h.records();
    assertAcknowledgedAudited(records, [`echo ${word}`]);
    // The counts are not lost: one aggregate per source and reason.
    const aggregates = records.filter((r) => r.event === "refusals_aggregated");
    assert.deepEqual(
      aggregates.map((r) => [r.refused_event, r.source]).sort(),
      [["bearer_invalid", "127.0.0.1"], ["http_forbidden", "127.0.0.1"]],
    );
    const total = aggregates.reduce((sum, r) => sum + Number(r.count), 0);
    assert.equal(total, 2 * FLOOD - 2);
  } finally {
    await h.server.shutdown();
    await h.context.close("test finished");
    await assertAuditVerifies(h.auditPath);
    await Deno.remove(h.dir, { recursive: true });
  }
});

Deno.test("beyond the interval's budget of sources and reasons, refusals are only counted, with one suppressed marker", async () => {
  const h = await startHttp({ refusalLimits: { intervalMs: 60_000, maxPairs: 4 } });
  try {
    const before = (await h.records()).length;
    // 12 distinct reasons from one source: foreign origins with different hosts.
    for (let i = 0; i < 12; i++) {
      const response = await fetch(h.mcpUrl, {
        method: "POST",
        headers: { ...MCP_POST_HEADERS, origin: `https://evil-${i}.example` },
        body: "{}",
      });
      assert.equal(response.status, 403);
      await response.body?.cancel();
    }
    const written = (await h.records()).slice(before).filter((r) => r.event === "http_forbidden");
    assert.equal(written.length, 4);
    await h.server.shutdown();
    const marker = (await h.records()).filter((r) => r.event === "refusals_suppressed");
    assert.equal(marker.length, 1);
    assert.equal(marker[0]?.count, 8);
  } finally {
    await h.close();
  }
});
