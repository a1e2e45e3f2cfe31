/**
 * Request bodies are buffered under one budget across requests. Regression:
 * 8 concurrent 15 MB bodies peaked at 536 MiB RSS. Now at most four bodies at
 * the per-request limit are held at once; the rest are refused 503 at once.
 */
import assert from "node:assert/strict";
import { assertAcknowledgedAudited, cleanUp, startServer } from "./_http_server.ts";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";

async function rssMiB(pid: number): Promise<number> {
  const ps = await new Deno.Command("ps", { args: ["-o", "rss=", "-p", String(pid)] }).output();
  return Number(new TextDecoder().decode(ps.stdout).trim()) / 1024;
}

Deno.test("8 concurrent 15 MB bodies: at most the budget is buffered, the rest get 503 server_busy, RSS stays bounded", async () => {
  const server = await startServer();
  try {
    const pid = (await server.records()).find((r) => r.event === "server_start")?.pid as number;
    const body = JSON.stringify({
      jsonrpc: "2.0",
      id: 1,
      method: "ping",
      params: { pad: "a".repeat(15_000_000) },
    });
    let peak = await rssMiB(pid);
    let sampling = true;
    const sampler = (async () => {
      while (sampling) {
        peak = Math.max(peak, await rssMiB(pid));
        await new Promise((resolve) => setTimeout(resolve, 20));
      }
    })();
    // A body refused while it is still being sent may see its connection
    // closed before the 503 is read (a broken pipe on a loaded machine):
    // counted as such, and matched against the server's own 503 records.
    const statuses = await Promise.all(
      Array.from({ length: 8 }, async (): Promise<number | "reset"> => {
        try {
          const response = await fetch(server.url, {
            method: "POST",
            headers: {
              "content-type": "application/json",
              accept: "application/json, text/event-stream",
            },
            body,
          });
          await response.body?.cancel();
          return response.status;
        } catch (error) {
          if (error instanceof TypeError) return "reset";
          throw error;
        }
      }),
    );
    sampling = false;
    await sampler;
    const busy = statuses.filter((s) => s === 503 || s === "reset").length;
    console.log(
      `8 x 15 MB bodies: statuses ${statuses.join(",")}; server RSS peak ${peak.toFixed(0)} MiB`,
    );
    // Read bodies end at 400 (no session); the budget (64 MB) holds four.
    assert.ok(statuses.every((s) => s === 400 || s === 503 || s === "reset"), statuses.join(","));
    assert.ok(statuses.some((s) => s === 400), "the budget still held some bodies");
    assert.ok(peak < 400, `RSS peak ${peak} MiB`);
    const client = new Client({ name: "after-bodies", version: "0" });
    await client.connect(new StreamableHTTPClientTransport(new URL(server.url)));
    const word = `after-${crypto.randomUUID()}`;
    const result = await client.callTool({
      name: "run_command",
      arguments: { command: `echo ${word}` },
    });
    assert.equal((result.structuredContent as { stdout: string }).stdout, `${word}\n`);
    await client.close();
    const records = await server.records();
    assertAcknowledgedAudited(records, [`echo ${word}`]);
    assert.equal(
      records.filter((r) => r.event === "http_rejected" && r.status === 503).length,
      busy,
    );
  } finally {
    await cleanUp(server);
  }
});
