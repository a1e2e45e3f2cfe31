/**
 * Fair queueing over real HTTP with real SDK clients: with the default
 * limits, 16 OAuth clients x 60 calls all succeed (beyond the caps calls
 * wait instead of coming back BUSY), every attempt and outcome is audited,
 * and the chain verifies; a flood from one client does not push another
 * client's call behind the flood's backlog. Order is asserted from the audit
 * log's record order (structure), never from timings; speed figures are in
 * `bench/queue_bench.ts`.
 */
import assert from "node:assert/strict";
import { verifyAuditChain } from "../../../src/audit/mod.ts";
import { PIN, withHttp } from "./_harness.ts";
import { connectWithOAuth, type OAuthConnection } from "./_oauth.ts";

const CLIENTS = 16;
const CALLS_PER_CLIENT = 60;
/** Each client keeps its own cap's worth of calls in flight (http.max_concurrent_per_client, default 2). */
const IN_FLIGHT_PER_CLIENT = 2;

function codeOf(result: unknown): string {
  return ((result as { structuredContent?: { code?: string } }).structuredContent?.code) ??
    "no structured result";
}

async function closeAll(connections: readonly OAuthConnection[]): Promise<void> {
  await Promise.allSettled(connections.map((connection) => connection.close()));
}

Deno.test("16 HTTP clients x 60 calls with the default limits: all succeed (queued, none BUSY), every attempt and outcome audited, chain verifies", async () => {
  await withHttp({}, async (h) => {
    assert.equal(h.policy.limits.maxConcurrent, 4, "the default global cap");
    assert.equal(h.policy.limits.queueWaitMs, 10_000, "the default wait bound");
    assert.equal(h.policy.http.maxConcurrentPerClient, IN_FLIGHT_PER_CLIENT);
    const connections: OAuthConnection[] = [];
    try {
      for (let i = 0; i < CLIENTS; i++) connections.push(await connectWithOAuth(h.mcpUrl, PIN));
      const codes = new Map<string, number>();
      await Promise.all(
        connections.flatMap((connection, client) =>
          Array.from({ length: IN_FLIGHT_PER_CLIENT }, async (_, lane) => {
            for (let call = lane; call < CALLS_PER_CLIENT; call += IN_FLIGHT_PER_CLIENT) {
              const result = await connection.client.callTool({
                name: "run_command",
                arguments: { command: `echo c${client}-${call}` },
              });
              const code = codeOf(result);
              codes.set(code, (codes.get(code) ?? 0) + 1);
            }
          })
        ),
      );
      assert.deepEqual([...codes], [["OK", CLIENTS * CALLS_PER_CLIENT]]);
      const records = await h.records();
      const attempts = records.filter((r) => r.kind === "attempt" && r.tool === "run_command");
      const outcomes = records.filter((r) => r.kind === "outcome" && r.tool === "run_command");
      assert.equal(attempts.length, CLIENTS * CALLS_PER_CLIENT);
      assert.ok(attempts.every((r) => r.verdict === "allow"));
      const ended = new Set(outcomes.map((r) => r.call_id));
      assert.ok(attempts.every((r) => ended.has(r.call_id)), "every attempt has its outcome");
      assert.equal(outcomes.length, attempts.length);
      // More calls were in flight than the caps allow, so some really waited.
      assert.ok(attempts.some((r) => typeof r.queued_ms === "number"), "some calls were queued");
      const report = verifyAuditChain(await Deno.readFile(h.auditPath));
      assert.ok(report.ok, JSON.stringify(report));
    } finally {
      await closeAll(connections);
    }
  });
});

Deno.test("a flood from one HTTP client does not put another client's calls behind its backlog", async () => {
  // One client may fill the whole server, so only the queue's order can keep it fair.
  const limits = { maxConcurrent: 2 };
  await withHttp({ limits, http: { maxConcurrentPerClient: 2 } }, async (h) => {
    const flood = await connectWithOAuth(h.mcpUrl, PIN);
    const other = await connectWithOAuth(h.mcpUrl, PIN);
    try {
      const FLOOD = 12;
      const floodCalls = Array.from({ length: FLOOD }, (_, i) =>
        flood.client.callTool(
          {
            name: "run_command",
            arguments: { command: `sleep 0.3` },
          },
          undefined,
          { timeout: 60_000 },
        ).then((r) => `${codeOf(r)}#${i}`));
      // Wait (bounded) until the flood's backlog is in the queue.
      for (let i = 0; i < 500 && h.context.limiter.waiting < FLOOD - limits.maxConcurrent; i++) {
        await new Promise((resolve) => setTimeout(resolve, 10));
      }
      assert.equal(h.context.limiter.waiting, FLOOD - limits.maxConcurrent);
      const floodClient = (await h.records()).find((r) => r.kind === "attempt")?.client_id;
      const floodStartsBefore = (records: Record<string, unknown>[], callId: unknown) => {
        const at = records.findIndex((r) => r.kind === "attempt" && r.call_id === callId);
        return records.slice(0, at).filter((r) =>
          r.kind === "attempt" && r.client_id === floodClient
        ).length;
      };
      const otherCodes: string[] = [];
      for (let call = 0; call < 3; call++) {
        const seen = (await h.records()).filter((r) =>
          r.kind === "attempt" && r.client_id === floodClient
        ).length;
        const result = await other.client.callTool({
          name: "run_command",
          arguments: { command: `echo other-${call}` },
        });
        otherCodes.push(codeOf(result));
        const records = await h.records();
        const mine = records.filter((r) =>
          r.kind === "attempt" && r.client_id !== floodClient && r.tool === "run_command"
        );
        const ahead = floodStartsBefore(records, mine.at(-1)?.call_id);
        // Round-robin: while this call waited, the flood was served at most once
        // per freed slot already promised plus one turn; first-come-first-served
        // would have started the flood's whole backlog (10 calls) first.
        assert.ok(
          ahead <= seen + limits.maxConcurrent + 1,
          `flood calls started before the other client's call ${call}: ${ahead}, seen ${seen}`,
        );
      }
      assert.deepEqual(otherCodes, ["OK", "OK", "OK"]);
      const floodCodes = await Promise.all(floodCalls);
      assert.ok(floodCodes.every((code) => code.startsWith("OK#")), floodCodes.join());
      const report = verifyAuditChain(await Deno.readFile(h.auditPath));
      assert.ok(report.ok, JSON.stringify(report));
    } finally {
      await closeAll([flood, other]);
    }
  });
});
