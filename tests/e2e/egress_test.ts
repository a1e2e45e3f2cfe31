/**
 * `[sandbox] network = "allowlist"` through the real server and the real
 * MCP client: curl inside the sandbox reaches a listed host:port only
 * through htmcp's proxy (plain HTTP and CONNECT), a host:port not listed is
 * answered with a 403 the model can read, a direct connection has no route,
 * and every connection is audited.
 */
import assert from "node:assert/strict";
import { type Harness, startHarness } from "../_helpers/stdio_harness.ts";
import { assertSandboxMode } from "../_helpers/jail.ts";
import { egressSocketDir } from "../../src/egress/mod.ts";

interface Upstream {
  readonly port: number;
  requests: number;
  close(): Promise<void>;
}

/** A real HTTP server on host loopback, counting the requests it answers. */
function startUpstream(text: string): Upstream {
  const controller = new AbortController();
  const state = { requests: 0 };
  const server = Deno.serve(
    { hostname: "127.0.0.1", port: 0, signal: controller.signal, onListen: () => {} },
    () => {
      state.requests++;
      return new Response(text);
    },
  );
  return {
    port: server.addr.port,
    get requests() {
      return state.requests;
    },
    set requests(value: number) {
      state.requests = value;
    },
    async close() {
      controller.abort();
      await server.finished;
    },
  };
}

async function withEgress(
  allow: string | readonly string[],
  fn: (h: Harness) => Promise<void>,
  fullControl = true,
): Promise<void> {
  const h = await startHarness({
    allow: ["curl", "echo"],
    extraToml: `network = "allowlist"\nnetwork_allow = ${JSON.stringify([allow].flat())}\n` +
      (fullControl ? "[mode]\nfull_control = true\n" : ""),
  });
  try {
    await assertSandboxMode(h, "bwrap");
    await fn(h);
  } finally {
    await h.close();
    // The socket is gone with the server; its folder in /tmp is this test's own.
    await Deno.remove(egressSocketDir({ jailRoot: h.jail, auditLog: h.auditLog }), {
      recursive: true,
    }).catch(() => {});
  }
}

function egressRecords(records: Record<string, unknown>[], kind: string) {
  return records.filter((r) => r["kind"] === "event" && r["event"] === kind);
}

/**
 * The log once it holds `count` records of `kind`: the proxy writes
 * `egress_end` when it sees the connection close, which may be just after
 * the command's reply (bounded wait, 10 s).
 */
async function recordsWith(
  h: Harness,
  kind: string,
  count: number,
): Promise<Record<string, unknown>[]> {
  const deadline = Date.now() + 10_000;
  for (;;) {
    const records = await h.records();
    if (egressRecords(records, kind).length >= count || Date.now() > deadline) return records;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

Deno.test("egress: curl reaches a listed host:port through the proxy (plain HTTP and CONNECT), audited with bytes", async () => {
  const allowed = startUpstream("hello from the allowed host\n");
  try {
    // The wildcard entry proves the generated permission set (and its
    // startup self-check) accept Deno's wildcard form.
    await withEgress([`127.0.0.1:${allowed.port}`, "*.example.com:443"], async (h) => {
      const described = await h.describePolicy();
      assert.match(described.sandbox, /only through an HTTP proxy/);
      assert.match(described.sandbox, /\*\.example\.com:443/);
      const url = `http://127.0.0.1:${allowed.port}/hello`;
      const plain = await h.call("run_command", {
        command: `echo "$HTTP_PROXY $https_proxy"; curl -sS --max-time 10 ${url}`,
      });
      assert.equal(plain.code, "OK", plain.policy_reason);
      assert.equal(plain.exit_code, 0, plain.stderr);
      assert.equal(
        plain.stdout,
        "http://127.0.0.1:3128 http://127.0.0.1:3128\nhello from the allowed host\n",
      );
      const tunnel = await h.call("run_command", {
        command: `curl -sS --max-time 10 --proxytunnel ${url}`,
      });
      assert.equal(tunnel.exit_code, 0, tunnel.stderr);
      assert.equal(tunnel.stdout, "hello from the allowed host\n");
      assert.equal(allowed.requests, 2);

      const records = await recordsWith(h, "egress_end", 2);
      const decisions = egressRecords(records, "egress").filter((r) => r["verdict"] === "allowed");
      assert.deepEqual(decisions.map((r) => [r["method"], r["host"], r["port"]]).sort(), [
        ["CONNECT", "127.0.0.1", allowed.port],
        ["GET", "127.0.0.1", allowed.port],
      ]);
      const ends = egressRecords(records, "egress_end");
      assert.equal(ends.length, 2);
      for (const end of ends) {
        assert.equal(end["connected"], true);
        assert.ok(
          (end["bytes_up"] as number) > 0 && (end["bytes_down"] as number) > 0,
          JSON.stringify(end),
        );
      }
    });
  } finally {
    await allowed.close();
  }
});

Deno.test("egress: a host:port not listed gets a readable 403, a direct connection has no route; both audited", async () => {
  const allowed = startUpstream("allowed\n");
  const other = startUpstream("must never be reached\n");
  try {
    await withEgress(`127.0.0.1:${allowed.port}`, async (h) => {
      const refused = await h.call("run_command", {
        command: `curl -sS --max-time 10 -w ' status=%{http_code}' http://127.0.0.1:${other.port}/`,
      });
      assert.equal(refused.code, "OK");
      assert.match(
        refused.stdout,
        new RegExp(
          `^htmcp egress proxy: "127\\.0\\.0\\.1:${other.port}" is not in this server's \\[sandbox\\] network_allow`,
        ),
      );
      assert.match(refused.stdout, / status=403$/);
      const tunnel = await h.call("run_command", {
        command: `curl -sS --max-time 10 --proxytunnel http://127.0.0.1:${other.port}/`,
      });
      assert.notEqual(tunnel.exit_code, 0);
      assert.match(tunnel.stderr, /403/);
      const direct = await h.call("run_command", {
        command: `curl -sS --noproxy '*' --max-time 5 http://127.0.0.1:${allowed.port}/`,
      });
      assert.notEqual(direct.exit_code, 0, direct.stdout);
      assert.match(direct.stderr, /Failed to connect|Connection refused|Couldn't connect/);
      assert.equal(other.requests, 0, "the unlisted host was reached");
      assert.equal(allowed.requests, 0, "the direct connection reached the host");

      const records = await h.records();
      const refusals = egressRecords(records, "egress").filter((r) => r["verdict"] === "refused");
      assert.deepEqual(refusals.map((r) => [r["method"], r["host"], r["port"]]).sort(), [
        ["CONNECT", "127.0.0.1", other.port],
        ["GET", "127.0.0.1", other.port],
      ]);
      assert.equal(egressRecords(records, "egress_end").length, 0);
      // The direct attempt never reached the proxy; the command that made it is audited.
      assert.ok(
        records.some((r) =>
          r["kind"] === "attempt" && String(r["command_raw"]).includes("--noproxy")
        ),
      );
    });
  } finally {
    await allowed.close();
    await other.close();
  }
});

Deno.test("egress: an allowlisted curl (no shell, default mode) reaches a listed host through the proxy", async () => {
  const allowed = startUpstream("plain mode\n");
  try {
    await withEgress(`127.0.0.1:${allowed.port}`, async (h) => {
      const described = await h.describePolicy();
      assert.equal(described["full_control"], false);
      const result = await h.call("run_command", {
        command: `curl -sS --max-time 10 http://127.0.0.1:${allowed.port}/`,
      });
      assert.equal(result.code, "OK", result.policy_reason);
      assert.equal(result.stdout, "plain mode\n", result.stderr);
      const tools = await h.client.listTools();
      const run = tools.tools.find((tool) => tool.name === "run_command");
      assert.equal(run?.annotations?.openWorldHint, true);
    }, false);
  } finally {
    await allowed.close();
  }
});

Deno.test("egress: a listed name that resolves to a local address is refused (no DNS route to the host's services)", async () => {
  const allowed = startUpstream("must never be reached\n");
  try {
    await withEgress(`localhost:${allowed.port}`, async (h) => {
      const result = await h.call("run_command", {
        command: `curl -sS --max-time 10 http://localhost:${allowed.port}/`,
      });
      assert.match(result.stdout, /resolved to the local address 127\.0\.0\.1/);
      assert.equal(allowed.requests, 0);
      const ends = egressRecords(await recordsWith(h, "egress_end", 1), "egress_end");
      assert.equal(ends.length, 1);
      assert.equal(ends[0]?.["connected"], false);
    });
  } finally {
    await allowed.close();
  }
});
