/**
 * The PostgreSQL backend through the real CLI, as an operator runs it: a
 * server refuses to start before `htmcp state migrate` (and says so), the
 * migration is applied once, `htmcp check` grants and reports the database
 * address, and two server processes sharing the database are one fleet: a
 * session started through one replica is used and ended through the other,
 * with the real MCP SDK client. When the database goes away, `/readyz` says
 * `store: false` with 503.
 */
import assert, { equal, match, ok } from "node:assert/strict";
import { join } from "node:path";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { LAUNCH, readServingUrl } from "../../scripts/conformance.ts";
import { prepareJail } from "../_helpers/jail.ts";
import { postgresOrSkip } from "../_helpers/postgres.ts";
import { openPool, PostgresStateStore } from "../../src/state/mod.ts";

const DENO = Deno.execPath();

async function htmcp(args: string[], env: Record<string, string>) {
  const output = await new Deno.Command(DENO, {
    args: ["run", "-A", LAUNCH, ...args],
    env: { NO_COLOR: "1", ...env },
    stdin: "null",
    stdout: "piped",
    stderr: "piped",
  }).output();
  const decode = (bytes: Uint8Array) => new TextDecoder().decode(bytes);
  return { code: output.code, stdout: decode(output.stdout), stderr: decode(output.stderr) };
}

async function writePolicy(dir: string, extra: string[] = []): Promise<string> {
  await Deno.mkdir(join(dir, "jail"), { recursive: true });
  await prepareJail(join(dir, "jail"));
  const policy = join(dir, "policy.toml");
  await Deno.writeTextFile(
    policy,
    [
      `jail_root = "jail"`,
      `audit_log = "log/audit.jsonl"`,
      `[allowlist]`,
      `commands = ["ls", "true", "pwd"]`,
      `[auth]`,
      `mode = "none"`,
      `[state]`,
      `backend = "postgres"`,
      ...extra,
      "",
    ].join("\n"),
  );
  await Deno.mkdir(join(dir, "log"), { recursive: true });
  return policy;
}

function serve(policy: string, env: Record<string, string>) {
  const child = new Deno.Command(DENO, {
    args: ["run", "-A", LAUNCH, "serve", "--policy", policy, "--http", "127.0.0.1:0"],
    env: { NO_COLOR: "1", ...env },
    stdin: "null",
    stdout: "null",
    stderr: "piped",
  }).spawn();
  return child;
}

async function stop(child: Deno.ChildProcess): Promise<void> {
  try {
    child.kill("SIGTERM");
  } catch {
    // already exited
  }
  await child.status;
}

async function tool(client: Client, name: string, args: Record<string, unknown>) {
  const result = await client.callTool({ name, arguments: args });
  const text = (result.content as { type: string; text: string }[]).map((c) => c.text).join("");
  return { result, text };
}

Deno.test("the PostgreSQL backend through the CLI: migrate first, then a fleet of two replicas shares sessions", async (t) => {
  const server = await postgresOrSkip("the PostgreSQL fleet through the CLI");
  if (server === null) return;
  const dir = Deno.realPathSync(await Deno.makeTempDir({ prefix: "htmcp-fleet-" }));
  try {
    const url = await server.createDatabase("fleet");
    const env = { HTMCP_STATE_URL: url };
    const policy = await writePolicy(dir);

    await t.step(
      "a server refuses to start on a database whose schema is behind, and says what to run",
      async () => {
        const child = serve(policy, env);
        const status = await child.status;
        const stderr = new TextDecoder().decode(
          await new Response(child.stderr).arrayBuffer().catch(() => new ArrayBuffer(0)),
        );
        ok(!status.success);
        match(
          stderr,
          /schema is at version 0, and this htmcp needs version 1: run "htmcp state migrate/,
        );
        assert.doesNotMatch(stderr, /serving MCP/);
        // The URL (which may hold a password) is never printed.
        assert.doesNotMatch(stderr, /postgres:\/\//);
        const status2 = await htmcp(["state", "status", "--policy", policy], env);
        equal(status2.code, 1);
        match(status2.stdout, /version 0/);
      },
    );

    await t.step(
      "htmcp state migrate applies the schema once; a second run finds it current",
      async () => {
        const first = await htmcp(["state", "migrate", "--policy", policy], env);
        equal(first.code, 0, first.stderr);
        match(first.stdout, /Applied migration 1: /);
        const second = await htmcp(["state", "migrate", "--policy", policy], env);
        equal(second.code, 0, second.stderr);
        match(second.stdout, /is current \(version 1\)/);
        const status = await htmcp(["state", "status", "--policy", policy], env);
        equal(status.code, 0, status.stdout + status.stderr);
      },
    );

    await t.step(
      "htmcp check grants net to exactly the database's host:port and reports the store",
      async () => {
        const checked = await htmcp(["check", "--policy", policy], env);
        equal(checked.code, 0, checked.stdout + checked.stderr);
        match(checked.stdout, new RegExp(`net: +127\\.0\\.0\\.1:${server.port}\\n`));
        match(
          checked.stdout,
          /State store: postgres at 127\.0\.0\.1:\d+, reachable, schema version 1/,
        );
        match(checked.stdout, /Result: the Deno permission layer is in force\./);
        const wrongDb = await htmcp(["check", "--policy", policy], {
          HTMCP_STATE_URL: url.replace(/\/fleet$/, "/absent"),
        });
        equal(wrongDb.code, 1);
        match(
          wrongDb.stdout,
          /State store: postgres at .*: FAIL: database "absent" does not exist/,
        );
      },
    );

    await t.step(
      "a session started through one replica is used and ended through the other",
      async () => {
        const a = serve(policy, env);
        const b = serve(policy, env);
        const clients: Client[] = [];
        try {
          const [urlA, urlB] = await Promise.all([readServingUrl(a), readServingUrl(b)]);
          const connect = async (mcpUrl: string) => {
            const client = new Client({ name: "fleet-test", version: "0" });
            await client.connect(new StreamableHTTPClientTransport(new URL(mcpUrl)));
            clients.push(client);
            return client;
          };
          const clientA = await connect(urlA.url);
          const clientB = await connect(urlB.url);
          const started = await tool(clientA, "session_start", {});
          const id = (started.result.structuredContent as { session_id: string }).session_id;
          ok(typeof id === "string" && id.length > 10, started.text);

          // The record is a row in the shared database, not a file on either replica.
          const pool = await openPool(
            { backend: "postgres", urlFile: null, host: "127.0.0.1", port: server.port },
            env,
          );
          assert(pool.ok);
          const store = new PostgresStateStore(pool.sql);
          try {
            ok((await store.list("sessions")).includes(id));
          } finally {
            await store.close();
          }

          const ran = await tool(clientB, "run_command", { command: "pwd", session_id: id });
          equal(ran.result.isError ?? false, false, ran.text);
          const ended = await tool(clientB, "session_end", { session_id: id });
          equal(ended.result.isError ?? false, false, ended.text);
          const again = await tool(clientA, "session_end", { session_id: id });
          equal(again.result.isError, true, "ended on B means gone on A");

          const ready = await fetch(urlA.url.replace(/\/mcp$/, "/readyz"));
          equal(ready.status, 200);
          equal((await ready.json()).checks.store, true);

          // The database goes away: the replica is no longer ready, and says which check.
          await server.stop();
          await new Promise((resolve) => setTimeout(resolve, 1_100));
          const unready = await fetch(urlB.url.replace(/\/mcp$/, "/readyz"));
          equal(unready.status, 503);
          const body = await unready.json();
          equal(body.checks.store, false);
          equal(body.checks.audit, true);
        } finally {
          for (const client of clients) await client.close().catch(() => {});
          await stop(a);
          await stop(b);
        }
      },
    );
  } finally {
    await server.stop();
    await Deno.remove(dir, { recursive: true });
  }
});
