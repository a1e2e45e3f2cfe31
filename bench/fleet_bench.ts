/**
 * A fleet side by side, in one run: `run_command("true")` calls/s and
 * p50/p95 from 8 concurrent SDK v2 clients in the stateless 2026-07-28 era
 * (any call may land on any replica), against
 *
 * - one replica on the local state dir, addressed directly (today's setup);
 * - one replica on PostgreSQL, directly (what the shared store adds);
 * - one replica on PostgreSQL behind nginx (what the balancer adds);
 * - three replicas on PostgreSQL behind an nginx round-robin.
 *
 * Real engines on loopback: PostgreSQL (durable, fsync on) and nginx, both
 * started here and stopped by the pids this process started. Bounded: a
 * fixed number of calls per client.
 *
 * Run: deno run -A bench/fleet_bench.ts [calls per client]
 *
 * @module
 */
import { join } from "node:path";
import { Client, StreamableHTTPClientTransport } from "@modelcontextprotocol/client";
import { LAUNCH, readServingUrl } from "../scripts/conformance.ts";
import { planLaunch } from "../scripts/launch.ts";
import { prepareJail } from "../scripts/_jail.ts";
import { startPostgres } from "../tests/_helpers/postgres.ts";
import { freePort, startNginx } from "../tests/_helpers/nginx.ts";
import { percentiles } from "./stdio_roundtrip.ts";

const REPO = new URL("..", import.meta.url).pathname;
const CLIENTS = 8;

/** One measured setup. */
export interface FleetRow {
  readonly setup: string;
  readonly callsPerSecond: number;
  readonly p50Ms: number;
  readonly p95Ms: number;
}

async function writePolicy(dir: string, backend: "local" | "postgres", lb: number | null) {
  await Deno.mkdir(join(dir, "jail"), { recursive: true });
  await prepareJail(join(dir, "jail"));
  const policy = join(dir, `policy-${backend}-${lb ?? "direct"}.toml`);
  await Deno.writeTextFile(
    policy,
    [
      `jail_root = "jail"`,
      `audit_log = "audit-${backend}-${lb ?? "direct"}.jsonl"`,
      backend === "local" ? `state_dir = "state"` : "",
      `[allowlist]`,
      `commands = ["true"]`,
      `[auth]`,
      `mode = "none"`,
      `[limits]`,
      `max_concurrent = 8`,
      ...(lb === null ? [] : [`[http]`, `base_url = "http://127.0.0.1:${lb}"`]),
      ...(backend === "postgres"
        ? [`[state]`, `backend = "postgres"`, `url_file = "state-url"`]
        : []),
      "",
    ].join("\n"),
  );
  return policy;
}

async function startReplica(policy: string, port: number): Promise<Deno.ChildProcess> {
  const plan = await planLaunch(["serve", "--policy", policy, "--http", `127.0.0.1:${port}`], REPO);
  if (!plan.ok) throw new Error(plan.message);
  const child = new Deno.Command(Deno.execPath(), {
    args: [...plan.argv],
    env: { NO_COLOR: "1" },
    stdin: "null",
    stdout: "null",
    stderr: "piped",
  }).spawn();
  await readServingUrl(child);
  return child;
}

async function stopChild(child: Deno.ChildProcess): Promise<void> {
  const done = await Promise.race([
    child.status.then(() => true),
    new Promise<boolean>((resolve) => setTimeout(() => resolve(false), 0)),
  ]);
  if (!done) child.kill("SIGTERM");
  await child.status;
}

async function load(url: string, calls: number): Promise<Omit<FleetRow, "setup">> {
  const clients: Client[] = [];
  for (let n = 0; n < CLIENTS; n++) {
    const client = new Client(
      { name: "fleet-bench", version: "0" },
      { versionNegotiation: { mode: { pin: "2026-07-28" } } },
    );
    await client.connect(new StreamableHTTPClientTransport(new URL(url)));
    clients.push(client);
  }
  const samples: number[] = [];
  const started = performance.now();
  await Promise.all(clients.map(async (client) => {
    for (let i = 0; i < calls; i++) {
      const t0 = performance.now();
      const result = await client.callTool({ name: "run_command", arguments: { command: "true" } });
      const code = (result.structuredContent as { code?: string } | undefined)?.code;
      if (code !== "OK") throw new Error(`a bench call gave ${code}`);
      samples.push(performance.now() - t0);
    }
  }));
  const seconds = (performance.now() - started) / 1000;
  for (const client of clients) await client.close();
  const p = percentiles(samples);
  return { callsPerSecond: samples.length / seconds, p50Ms: p.p50, p95Ms: p.p95 };
}

/** Measures the four setups with `calls` calls per client each. */
export async function measureFleet(calls = 25): Promise<FleetRow[]> {
  const dir = Deno.realPathSync(await Deno.makeTempDir({ prefix: "htmcp-bench-fleet-" }));
  await Deno.chmod(dir, 0o755);
  const database = await startPostgres({ durable: true });
  if ("skip" in database) throw new Error(`PostgreSQL: ${database.skip}`);
  const children: Deno.ChildProcess[] = [];
  const nginxes: { stop(): Promise<void> }[] = [];
  const rows: FleetRow[] = [];
  try {
    await Deno.writeTextFile(
      join(dir, "state-url"),
      `${await database.createDatabase("fleet")}\n`,
      {
        mode: 0o600,
      },
    );
    const migrate = await new Deno.Command(Deno.execPath(), {
      args: [
        "run",
        "-A",
        LAUNCH,
        "state",
        "migrate",
        "--policy",
        await writePolicy(dir, "postgres", null),
      ],
      stdout: "null",
      stderr: "piped",
    }).output();
    if (!migrate.success) throw new Error(new TextDecoder().decode(migrate.stderr));

    const direct = async (setup: string, backend: "local" | "postgres") => {
      const port = freePort();
      const child = await startReplica(await writePolicy(dir, backend, null), port);
      children.push(child);
      rows.push({ setup, ...(await load(`http://127.0.0.1:${port}/mcp`, calls)) });
      await stopChild(child);
    };
    await direct("1 replica, state dir, direct", "local");
    await direct("1 replica, PostgreSQL, direct", "postgres");

    for (const count of [1, 3]) {
      const lb = freePort();
      const policy = await writePolicy(dir, "postgres", lb);
      const ports = Array.from({ length: count }, () => freePort());
      const replicas = [];
      for (const port of ports) replicas.push(await startReplica(policy, port));
      children.push(...replicas);
      const nginxDir = await Deno.makeTempDir({ prefix: "htmcp-bench-nginx-" });
      const nginx = await startNginx(
        nginxDir,
        lb,
        `  upstream htmcp { ${ports.map((port) => `server 127.0.0.1:${port};`).join(" ")} }
  server {
    listen 127.0.0.1:${lb};
    location / { proxy_pass http://htmcp; proxy_read_timeout 3600s; }
  }`,
      );
      nginxes.push(nginx);
      rows.push({
        setup: `${count} replica${count > 1 ? "s" : ""}, PostgreSQL, nginx`,
        ...(await load(`http://127.0.0.1:${lb}/mcp`, calls)),
      });
      await nginx.stop();
      for (const replica of replicas) await stopChild(replica);
      await Deno.remove(nginxDir, { recursive: true });
    }
  } finally {
    for (const nginx of nginxes) await nginx.stop().catch(() => {});
    for (const child of children) await stopChild(child).catch(() => {});
    await database.stop();
    await Deno.remove(dir, { recursive: true });
  }
  return rows;
}

/** Prints the rows as the bench's table. */
export function printFleetRows(rows: readonly FleetRow[]): void {
  for (const row of rows) {
    console.log(
      `   ${row.setup.padEnd(32)} ${row.callsPerSecond.toFixed(0).padStart(4)} calls/s, ` +
        `p50 ${row.p50Ms.toFixed(1)} ms, p95 ${
          row.p95Ms.toFixed(1)
        } ms (${CLIENTS} clients, 2026-07-28)`,
    );
  }
}

if (import.meta.main) {
  printFleetRows(await measureFleet(Number(Deno.args[0] ?? 25)));
}
