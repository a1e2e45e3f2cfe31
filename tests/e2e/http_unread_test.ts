/**
 * Clients that never read their answers hold bounded memory. Regression:
 * about 29 MiB per unread answer (84 -> 1,285 MiB RSS after 40), because the
 * output was carried twice and NUL bytes grew sixfold. Now each answer is
 * built once (structuredContent + a compact text) and an unread event stream
 * is bounded per connection.
 */
import assert from "node:assert/strict";
import { assertAcknowledgedAudited, cleanUp, startServer } from "./_http_server.ts";

async function rssMiB(pid: number): Promise<number> {
  const ps = await new Deno.Command("ps", { args: ["-o", "rss=", "-p", String(pid)] }).output();
  return Number(new TextDecoder().decode(ps.stdout).trim()) / 1024;
}

const ACCEPT = "application/json, text/event-stream";

Deno.test("40 unread 1 MB answers (half of them NUL bytes) keep the server's RSS bounded, and every call is audited", async () => {
  const server = await startServer({
    allow: ["head", "echo"],
    limits: ["max_concurrent = 64"],
    http: ["max_concurrent_per_client = 64"],
    files: { "x.txt": "x".repeat(1_000_000), "z.bin": "\0".repeat(1_000_000) },
  });
  const conns: Deno.Conn[] = [];
  try {
    const pid = (await server.records()).find((r) => r.event === "server_start")?.pid as number;
    const init = await fetch(server.url, {
      method: "POST",
      headers: { "content-type": "application/json", accept: ACCEPT },
      body: JSON.stringify({
        jsonrpc: "2.0",
        id: 0,
        method: "initialize",
        params: {
          protocolVersion: "2025-11-25",
          capabilities: {},
          clientInfo: { name: "u", version: "0" },
        },
      }),
    });
    await init.body?.cancel();
    const session = init.headers.get("mcp-session-id") as string;
    const done = await fetch(server.url, {
      method: "POST",
      headers: { "content-type": "application/json", accept: ACCEPT, "mcp-session-id": session },
      body: JSON.stringify({ jsonrpc: "2.0", method: "notifications/initialized" }),
    });
    await done.body?.cancel();
    const before = await rssMiB(pid);
    const url = new URL(server.url);
    const commands: string[] = [];
    for (let i = 0; i < 40; i++) {
      const command = `head -c ${1_000_000 - i} ${i % 2 === 0 ? "x.txt" : "z.bin"}`;
      commands.push(command);
      const body = JSON.stringify({
        jsonrpc: "2.0",
        id: i + 1,
        method: "tools/call",
        params: { name: "run_command", arguments: { command } },
      });
      const conn = await Deno.connect({ hostname: "127.0.0.1", port: Number(url.port) });
      conns.push(conn);
      await conn.write(new TextEncoder().encode(
        `POST /mcp HTTP/1.1\r\nhost: ${url.host}\r\ncontent-type: application/json\r\naccept: ${ACCEPT}\r\nmcp-session-id: ${session}\r\ncontent-length: ${
          new TextEncoder().encode(body).byteLength
        }\r\n\r\n${body}`,
      ));
    }
    let records: Record<string, unknown>[] = [];
    for (let i = 0; i < 1000; i++) {
      records = await server.records();
      if (records.filter((r) => r.kind === "outcome").length >= 40) break;
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    await new Promise((resolve) => setTimeout(resolve, 300));
    const after = await rssMiB(pid);
    console.log(
      `40 unread answers of ~1 MB: server RSS ${before.toFixed(0)} -> ${after.toFixed(0)} MiB (${
        ((after - before) / 40).toFixed(2)
      } MiB per unread answer)`,
    );
    assert.ok(after - before < 40 * 8, `grew ${after - before} MiB`);
    assertAcknowledgedAudited(records, commands);
  } finally {
    for (const conn of conns) {
      try {
        conn.close();
      } catch {
        // closed
      }
    }
    await cleanUp(server);
  }
});
