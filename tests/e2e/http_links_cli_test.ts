/**
 * Links under the generated permission set: `htmcp serve --http` as its own
 * process through the launcher (so Deno's permission layer is the policy's),
 * a real SDK client makes a link, and a real `fetch` downloads it. Proves
 * the server needs nothing beyond its set to snapshot a jail file into the
 * state dir and serve it, and that the audit chain still verifies.
 */
import assert from "node:assert/strict";
import { createHash } from "node:crypto";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { startServer } from "./_http_server.ts";

Deno.test("htmcp serve --http makes and serves a link under its own permission set, and refuses a symlink out of the jail", async () => {
  const text = "made in the jail\n";
  const server = await startServer({ files: { "result.txt": text } });
  try {
    await Deno.symlink("/etc/passwd", `${server.dir}/jail/passwd-link`);
    const client = new Client({ name: "links-cli-e2e", version: "0" });
    await client.connect(new StreamableHTTPClientTransport(new URL(server.url)));
    try {
      const made = await client.callTool({
        name: "create_file_link",
        arguments: { path: "result.txt", max_downloads: 1 },
      });
      const result = made.structuredContent as { code: string; url: string; sha256: string };
      assert.equal(result.code, "OK", JSON.stringify(result));
      assert.equal(result.sha256, createHash("sha256").update(text).digest("hex"));
      const response = await fetch(result.url);
      assert.equal(response.status, 200);
      assert.equal(await response.text(), text);
      const second = await fetch(result.url);
      assert.equal(second.status, 404);
      assert.equal((await second.arrayBuffer()).byteLength, 0);

      const refused = await client.callTool({
        name: "create_file_link",
        arguments: { path: "passwd-link" },
      });
      assert.equal((refused.structuredContent as { code: string }).code, "SYMLINK_REFUSED");
    } finally {
      await client.close();
    }
    const status = await server.stop();
    assert.equal(status.code, 0, server.stderr());
    const events = (await server.records()).filter((r) => r.kind === "event").map((r) => r.event);
    for (
      const kind of ["link_created", "link_downloaded", "link_download_refused", "link_refused"]
    ) {
      assert.ok(events.includes(kind), `${kind} is in the log`);
    }
    assert.ok(!server.stderr().includes("NotCapable"), server.stderr());
  } finally {
    await server.stop();
    await Deno.remove(server.dir, { recursive: true });
  }
});
