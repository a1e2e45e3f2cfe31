/**
 * `htmcp serve --http` as an operator runs it: the real CLI child process
 * under the generated permission set, a real SDK client, then SIGTERM while a
 * command runs: the process exits 0 promptly, and the audit log holds the
 * killed command's outcome and the stop record.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { startCliServer, writeLoopbackPolicy } from "../../scripts/conformance.ts";

Deno.test("htmcp serve --http serves tools, then SIGTERM kills the running command and stops cleanly", async () => {
  const dir = await Deno.makeTempDir({ prefix: "htmcp-http-cli-" });
  try {
    const server = await startCliServer(await writeLoopbackPolicy(dir));
    assert.match(server.stderr(), /AUTHENTICATION IS OFF/);
    const client = new Client({ name: "cli-e2e", version: "0" });
    await client.connect(new StreamableHTTPClientTransport(new URL(server.url)));
    const echoed = await client.callTool({
      name: "run_command",
      arguments: { command: "echo up" },
    });
    assert.equal((echoed.structuredContent as { stdout: string }).stdout, "up\n");

    const pending = client.callTool({ name: "run_command", arguments: { command: "sleep 30" } })
      .catch((error: unknown) => error);
    const auditPath = join(dir, "audit.jsonl");
    const records = async () =>
      (await Deno.readTextFile(auditPath)).split("\n").filter((l) => l !== "").map((l) =>
        JSON.parse(l)
      );
    for (let i = 0; i < 300; i++) {
      if ((await records()).some((r) => r.kind === "attempt" && r.command_raw === "sleep 30")) {
        break;
      }
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
    const started = performance.now();
    server.child.kill("SIGTERM");
    const status = await server.child.status;
    assert.equal(status.code, 0, server.stderr());
    assert.ok(performance.now() - started < 10_000);
    assert.match(server.stderr(), /stopped \(received SIGTERM\)/);
    await client.close().catch(() => {});
    await pending;

    const log = await records();
    const outcome = log.find((r) =>
      r.kind === "outcome" &&
      r.call_id === log.find((a) => a.kind === "attempt" && a.command_raw === "sleep 30")?.call_id
    );
    assert.ok(outcome !== undefined, "the killed command's outcome is in the log");
    assert.notEqual(outcome.code, "OK");
    assert.equal(log.at(-1)?.event, "server_stop");
    assert.equal(log.at(-1)?.reason, "received SIGTERM");
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});
