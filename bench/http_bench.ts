/**
 * Throughput and latency of authenticated `run_command("true")` calls over
 * Streamable HTTP with 1, 8 and 32 concurrent OAuth clients (each its own
 * registered client, token and session, each making calls back to back),
 * against the same calls over stdio from one client.
 *
 * Both servers are the real CLI (`htmcp serve`, through `scripts/launch.ts`,
 * so under the generated permission set) in their own process, the HTTP one
 * on 127.0.0.1 with OAuth; the clients run here. `[sandbox] mode = "none"` by
 * default, so the figures show the transport's cost rather than bubblewrap's
 * (~10 ms per call more here with it). `limits.max_concurrent` is raised to 64
 * so the global cap is never reached, unless `defaultLimits` keeps the shipped
 * caps (4 global, 2 per client): then calls beyond them wait in the fair queue
 * and the figures show queueing (`bench/queue_bench.ts`).
 *
 * Run: deno run -A bench/http_bench.ts [calls-per-client]
 *
 * @module
 */
import { join } from "node:path";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { LAUNCH, startCliServer } from "../scripts/conformance.ts";
import { connectWithOAuth, type OAuthConnection } from "../tests/transport/http/_oauth.ts";
import { prepareJail } from "../scripts/_jail.ts";

const PIN = "bench-pin-4821";

/** One measured configuration. */
export interface BenchRow {
  /** `http` or `stdio`. */
  readonly transport: "http" | "stdio";
  /** Concurrent clients, each making calls one after another. */
  readonly clients: number;
  readonly calls: number;
  readonly callsPerSecond: number;
  readonly p50Ms: number;
  readonly p95Ms: number;
}

/** Options of {@linkcode measureHttpBench}. */
export interface HttpBenchOptions {
  /** Concurrency levels (default 1, 8, 32). */
  readonly concurrency?: readonly number[];
  /** Calls each client makes per level (default 100). */
  readonly callsPerClient?: number;
  /** Also measure one stdio client for comparison (default true). */
  readonly stdio?: boolean;
  /** `[sandbox] mode` of the server (default "none"). */
  readonly sandbox?: "none" | "auto" | "bwrap";
  /** Keep the default `[limits]` (max_concurrent 4, queueing on) instead of 64 slots (default false). */
  readonly defaultLimits?: boolean;
}

/** p50/p95 of `samples` in milliseconds. */
function percentiles(samples: readonly number[]): { p50: number; p95: number } {
  const sorted = [...samples].sort((a, b) => a - b);
  const at = (q: number) =>
    sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))] ?? NaN;
  return { p50: at(0.5), p95: at(0.95) };
}

async function callTrue(client: Client): Promise<number> {
  const t0 = performance.now();
  const result = await client.callTool({ name: "run_command", arguments: { command: "true" } });
  const elapsed = performance.now() - t0;
  const code = (result.structuredContent as { code?: string } | undefined)?.code;
  if (code !== "OK") throw new Error(`run_command("true") returned ${code}`);
  return elapsed;
}

/** Runs `calls` back-to-back calls on each client at once; returns the row. */
async function measure(
  transport: "http" | "stdio",
  clients: readonly Client[],
  calls: number,
): Promise<BenchRow> {
  for (const client of clients) for (let i = 0; i < 3; i++) await callTrue(client);
  const samples: number[] = [];
  const t0 = performance.now();
  await Promise.all(clients.map(async (client) => {
    for (let i = 0; i < calls; i++) samples.push(await callTrue(client));
  }));
  const wall = performance.now() - t0;
  const { p50, p95 } = percentiles(samples);
  return {
    transport,
    clients: clients.length,
    calls: samples.length,
    callsPerSecond: Math.round(samples.length / (wall / 1000)),
    p50Ms: Math.round(p50 * 100) / 100,
    p95Ms: Math.round(p95 * 100) / 100,
  };
}

async function writePolicy(dir: string, sandbox: string, defaultLimits: boolean): Promise<string> {
  await Deno.mkdir(join(dir, "jail"));
  // Commands run as the jail's owner, never root; bwrap must reach it.
  await prepareJail(join(dir, "jail"));
  const path = join(dir, "policy.toml");
  await Deno.writeTextFile(
    path,
    `jail_root = "jail"
audit_log = "audit.jsonl"
state_dir = "state"

[allowlist]
commands = ["true"]

${defaultLimits ? "" : "[limits]\nmax_concurrent = 64"}

[sandbox]
mode = "${sandbox}"
${sandbox === "none" ? "accept_path_check_only = true" : ""}

[http]
max_concurrent_per_client = 2
`,
  );
  return path;
}

/**
 * Measures HTTP (and stdio) calls per second and p50/p95 latency.
 *
 * @returns One row per configuration.
 */
export async function measureHttpBench(options: HttpBenchOptions = {}): Promise<BenchRow[]> {
  const levels = options.concurrency ?? [1, 8, 32];
  const calls = options.callsPerClient ?? 100;
  const dir = await Deno.makeTempDir({ prefix: "htmcp-http-bench-" });
  const rows: BenchRow[] = [];
  try {
    const policyFile = await writePolicy(
      dir,
      options.sandbox ?? "none",
      options.defaultLimits ?? false,
    );
    const server = await startCliServer(policyFile, { HTMCP_OAUTH_ADMIN_PIN: PIN });
    const connections: OAuthConnection[] = [];
    try {
      const mcpUrl = new URL(server.url);
      for (let i = 0; i < Math.max(...levels); i++) {
        connections.push(await connectWithOAuth(mcpUrl, PIN));
      }
      for (const level of levels) {
        rows.push(await measure("http", connections.slice(0, level).map((c) => c.client), calls));
      }
    } finally {
      for (const connection of connections) await connection.close();
      server.child.kill("SIGTERM");
      await server.child.status;
    }

    if (options.stdio ?? true) {
      const client = new Client({ name: "htmcp-bench", version: "0" });
      await client.connect(
        new StdioClientTransport({
          command: Deno.execPath(),
          args: ["run", "-A", LAUNCH, "serve", "--policy", policyFile],
          env: { PATH: Deno.env.get("PATH") ?? "/usr/bin:/bin" },
          stderr: "ignore",
        }),
      );
      try {
        rows.push(await measure("stdio", [client], calls));
      } finally {
        await client.close();
      }
    }
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
  return rows;
}

if (import.meta.main) {
  const calls = Number(Deno.args[0] ?? 100);
  const rows = await measureHttpBench({ callsPerClient: calls });
  console.log("transport clients   calls   calls/s   p50 ms   p95 ms");
  for (const row of rows) {
    console.log(
      `${row.transport.padEnd(9)} ${String(row.clients).padStart(7)} ${
        String(row.calls).padStart(7)
      } ${String(row.callsPerSecond).padStart(9)} ${row.p50Ms.toFixed(2).padStart(8)} ${
        row.p95Ms.toFixed(2).padStart(8)
      }`,
    );
  }
}
