/**
 * Connection limits that hold, against the real CLI server under a small
 * descriptor limit (`prlimit --nofile=256`), flooded by a separate process
 * with idle TCP connections. Regression: at a 512 descriptor limit about 490
 * idle connections ended the server (Deno.serve's accept loop exits on EMFILE).
 */
import assert from "node:assert/strict";
import { fileURLToPath } from "node:url";
import { LAUNCH } from "../../scripts/conformance.ts";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import {
  assertAcknowledgedAudited,
  cleanUp,
  type ServerProcess,
  startServer,
} from "./_http_server.ts";

const FLOOD = fileURLToPath(new URL("./_flood_client.ts", import.meta.url));

interface FloodReport {
  opened: number;
  failed: number;
  closedByServer: number;
}

async function flood(url: string, count: number, holdMs: number): Promise<FloodReport> {
  const port = new URL(url).port;
  const out = await new Deno.Command(Deno.execPath(), {
    args: ["run", "--allow-net=127.0.0.1", FLOOD, port, String(count), String(holdMs)],
    stdout: "piped",
    stderr: "inherit",
  }).output();
  assert.equal(out.code, 0);
  return JSON.parse(new TextDecoder().decode(out.stdout));
}

async function echoOverMcp(url: string, word: string): Promise<string> {
  const client = new Client({ name: "after-flood", version: "0" });
  await client.connect(new StreamableHTTPClientTransport(new URL(url)));
  try {
    const result = await client.callTool({
      name: "run_command",
      arguments: { command: `echo ${word}` },
    });
    return (result.structuredContent as { stdout: string }).stdout;
  } finally {
    await client.close();
  }
}

function watchExit(server: ServerProcess): { exited: () => boolean } {
  let exited = false;
  server.child.status.then(() => exited = true);
  return { exited: () => exited };
}

Deno.test("a flood of idle connections past the descriptor limit (EMFILE) does not end the server, which serves again after", async () => {
  // max_connections far above what 256 descriptors allow, so accept() itself
  // fails with EMFILE: the case that used to end the process.
  const server = await startServer({
    nofile: 256,
    http: ["max_connections = 5000", "header_timeout_ms = 1500"],
  });
  const life = watchExit(server);
  try {
    assert.match(server.stderr(), /file descriptors: limit 256 \(HTMCP_FD_LIMIT\)/);
    const report = await flood(server.url, 600, 4_000);
    console.log(
      `flood: ${report.opened} connections opened, ${report.failed} failed, ${report.closedByServer} closed by the server`,
    );
    assert.equal(life.exited(), false, `the server exited:\n${server.stderr()}`);
    assert.match(
      server.stderr(),
      /accepting a connection failed \d+ time\(s\).*Too many open files/,
    );
    const word = `served-${crypto.randomUUID()}`;
    assert.equal(await echoOverMcp(server.url, word), `${word}\n`);
    const records = await server.records();
    const failures = records.filter((r) => r.event === "http_accept_failed");
    assert.ok(failures.length >= 1, "accept failures are audited");
    console.log(
      `accept failures recorded: ${failures.length} record(s), ${failures.at(-1)?.total} in all`,
    );
    assertAcknowledgedAudited(records, [`echo ${word}`]);
  } finally {
    const status = await server.stop();
    assert.equal(status.code, 0, server.stderr());
    await cleanUp(server);
  }
});

Deno.test("beyond max_connections (sized from the descriptor limit) new connections are closed at once; slow headers time out", async () => {
  const server = await startServer({ nofile: 256, http: ["header_timeout_ms = 1000"] });
  const life = watchExit(server);
  try {
    const match = /limit 256 \(HTMCP_FD_LIMIT\), (\d+) reserved, at most (\d+) HTTP connections/
      .exec(server.stderr());
    assert.ok(match !== null, server.stderr());
    const max = Number(match[2]);
    assert.ok(max > 0 && max + Number(match[1]) <= 256);

    // Slowloris: a request head that never ends is cut at the header timeout.
    const port = Number(new URL(server.url).port);
    const slow = await Deno.connect({ hostname: "127.0.0.1", port });
    await slow.write(new TextEncoder().encode("POST /mcp HTTP/1.1\r\nhost: 127.0.0.1\r\n"));
    const slowStart = performance.now();
    const closed = await slow.read(new Uint8Array(16)).catch(() => null);
    const slowMs = performance.now() - slowStart;
    slow.close();
    console.log(`an unfinished request head was closed after ${Math.round(slowMs)} ms`);
    assert.equal(closed, null);
    assert.ok(slowMs >= 800 && slowMs < 5_000, `closed after ${slowMs} ms`);

    const report = await flood(server.url, max + 150, 600);
    console.log(
      `flood of ${
        max + 150
      }: ${report.opened} opened, ${report.closedByServer} closed at once by the server (limit ${max})`,
    );
    assert.ok(report.closedByServer >= report.opened - max, JSON.stringify(report));
    assert.equal(life.exited(), false);
    const word = `served-${crypto.randomUUID()}`;
    assert.equal(await echoOnceFreed(server.url, word), `${word}\n`);
    assertAcknowledgedAudited(await server.records(), [`echo ${word}`]);
  } finally {
    await cleanUp(server);
  }
});

/**
 * The flood's sockets are closed by the client; the server counts them free
 * once it sees each close, a moment later. Until then a new connection is
 * beyond the limit and closed at once, by design: try again, bounded.
 */
async function echoOnceFreed(url: string, word: string): Promise<string> {
  for (let attempt = 1;; attempt++) {
    try {
      return await echoOverMcp(url, word);
    } catch (error) {
      if (attempt >= 20) throw error;
      await new Promise((resolve) => setTimeout(resolve, 250));
    }
  }
}

Deno.test("htmcp check prints the descriptor limit the launcher read and the connection limit", async () => {
  const server = await startServer({ nofile: 256 });
  try {
    const out = await new Deno.Command("prlimit", {
      args: [
        "--nofile=256:256",
        Deno.execPath(),
        "run",
        "-A",
        LAUNCH,
        "check",
        "--policy",
        `${server.dir}/policy.toml`,
      ],
      stdout: "piped",
      stderr: "piped",
    }).output();
    const text = new TextDecoder().decode(out.stdout);
    assert.match(
      text,
      /HTTP: file descriptors: limit 256 \(HTMCP_FD_LIMIT\), \d+ reserved, at most \d+ HTTP connections/,
      text + new TextDecoder().decode(out.stderr),
    );
  } finally {
    await cleanUp(server);
  }
});
