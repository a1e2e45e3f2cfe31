/**
 * The README's tool table is the tool list a client gets: every tool a real
 * HTTP server lists (audit_tail exposed, links on) has a row, no row names a
 * tool that does not exist, and each row's four annotations are the ones the
 * server sends.
 */
import assert from "node:assert/strict";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { cleanUp, startServer } from "../e2e/_http_server.ts";
import { REPO } from "../_helpers/stdio_harness.ts";

const HINTS = ["readOnlyHint", "destructiveHint", "idempotentHint", "openWorldHint"] as const;

function readmeRows(readme: string): Map<string, string> {
  const start = readme.indexOf("<!-- tools:start -->");
  const end = readme.indexOf("<!-- tools:end -->");
  assert.ok(start !== -1 && end > start, "README has the tools markers");
  const rows = new Map<string, string>();
  for (const line of readme.slice(start, end).split("\n")) {
    if (!line.startsWith("| `")) continue;
    const [name, annotations] = line.split("|").slice(1, 3).map((cell) => cell.trim());
    rows.set(name!.replaceAll("`", ""), annotations!);
  }
  return rows;
}

Deno.test({
  name:
    "the README's tool table names exactly the tools a server lists, with their four annotations",
  sanitizeResources: false,
  sanitizeOps: false,
  async fn() {
    const rows = readmeRows(await Deno.readTextFile(`${REPO}README.md`));
    const server = await startServer({ extraToml: "[audit]\nexpose_to_model = true" });
    try {
      const client = new Client({ name: "readme-tools", version: "0" });
      await client.connect(new StreamableHTTPClientTransport(new URL(server.url)));
      const { tools } = await client.listTools();
      await client.close();
      assert.deepEqual(
        tools.map((tool) => tool.name).sort(),
        [...rows.keys()].sort(),
        "one row per listed tool",
      );
      for (const tool of tools) {
        const annotations = tool.annotations as Record<string, unknown>;
        const expected = HINTS.map((hint) => `\`${hint}: ${annotations[hint]}\``).join(", ");
        assert.equal(rows.get(tool.name), expected, tool.name);
        assert.equal(typeof tool.title, "string", `${tool.name} has a title`);
      }
    } finally {
      await server.stop();
      await cleanUp(server);
    }
  },
});
