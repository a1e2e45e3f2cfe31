/**
 * Jobs in a fleet: three replicas on one PostgreSQL database, each started
 * under its generated permission set (no launcher in between, so the pid
 * the test holds is the server's own), the real SDK client on each. A job
 * started through replica A is listed and waited for through B and
 * cancelled through C (the cancel reaches A's process through the store);
 * a replica killed with SIGKILL leaves its job `lost`, never `running`.
 * Then the same behind a real nginx round-robin over three replicas, with
 * the SDK v2 client in the stateless 2026-07-28 era: one client, every call
 * landing on whichever replica nginx picks.
 */
import { equal, ok } from "node:assert/strict";
import { join } from "node:path";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { LAUNCH, readServingUrl } from "../../scripts/conformance.ts";
import { planLaunch } from "../../scripts/launch.ts";
import { prepareJail } from "../_helpers/jail.ts";
import { postgresOrSkip } from "../_helpers/postgres.ts";
import { REPO } from "../_helpers/stdio_harness.ts";
import { freePort, NGINX, startNginx } from "../_helpers/nginx.ts";
import { connectV2Http } from "../e2e/_v2_clients.ts";

const DENO = Deno.execPath();

interface Replica {
  readonly child: Deno.ChildProcess;
  /** Where the replica itself listens (its own port, chosen when it bound). */
  readonly listening: string;
  /** A client of this replica alone; null behind the balancer (its origin is the balancer's). */
  readonly client: Client | null;
  readonly pid: number;
}

interface JobView {
  readonly job_id?: string;
  readonly code?: string;
  readonly job?: { readonly state: string; readonly code: string | null };
  readonly jobs?: readonly { readonly job_id: string }[];
}

async function writePolicy(dir: string, url: string, extra: string[] = []): Promise<string> {
  // The URL in an owner-only file (not the environment), so the launch plan
  // this test computes in its own process reads the same policy the server does.
  await Deno.writeTextFile(join(dir, "state-url"), `${url}\n`, { mode: 0o600 });
  await Deno.mkdir(join(dir, "jail"), { recursive: true });
  await prepareJail(join(dir, "jail"));
  await Deno.mkdir(join(dir, "log"), { recursive: true });
  const policy = join(dir, "policy.toml");
  await Deno.writeTextFile(
    policy,
    [
      `jail_root = "jail"`,
      `audit_log = "log/audit.jsonl"`,
      `[allowlist]`,
      `commands = ["sleep", "echo"]`,
      `[auth]`,
      `mode = "none"`,
      `[state]`,
      `backend = "postgres"`,
      `url_file = "state-url"`,
      ...extra,
      "",
    ].join("\n"),
  );
  return policy;
}

async function startReplica(
  policy: string,
  env: Record<string, string>,
  listen = "127.0.0.1:0",
  connect = true,
): Promise<Replica> {
  const plan = await planLaunch(["serve", "--policy", policy, "--http", listen], REPO);
  if (!plan.ok) throw new Error(plan.message);
  const child = new Deno.Command(DENO, {
    args: [...plan.argv],
    env: { NO_COLOR: "1", ...env },
    stdin: "null",
    stdout: "null",
    stderr: "piped",
  }).spawn();
  const serving = await readServingUrl(child);
  if (!connect) return { child, listening: serving.listening, client: null, pid: child.pid };
  const client = new Client({ name: "jobs-fleet", version: "0" });
  await client.connect(new StreamableHTTPClientTransport(new URL(serving.url)));
  return { child, listening: serving.listening, client, pid: child.pid };
}

async function call(replica: Replica, name: string, args: Record<string, unknown>) {
  const result = await replica.client!.callTool({ name, arguments: args }, undefined, {
    timeout: 60_000,
  });
  return result.structuredContent as JobView;
}

async function stopReplica(replica: Replica): Promise<void> {
  await replica.client?.close().catch(() => {});
  // Signalled only while it is still the child this test started.
  const status = await Promise.race([
    replica.child.status,
    new Promise<null>((resolve) => setTimeout(() => resolve(null), 0)),
  ]);
  if (status === null) replica.child.kill("SIGTERM");
  await replica.child.status;
}

Deno.test("jobs on the PostgreSQL backend: started through A, waited for through B, cancelled through C; a SIGKILLed replica's job is lost", async () => {
  const database = await postgresOrSkip("jobs across replicas on PostgreSQL");
  if (database === null) return;
  const dir = Deno.realPathSync(await Deno.makeTempDir({ prefix: "htmcp-jobs-fleet-" }));
  const replicas: Replica[] = [];
  try {
    const env = {};
    const policy = await writePolicy(dir, await database.createDatabase("jobs"));
    const migrated = await new Deno.Command(DENO, {
      args: ["run", "-A", LAUNCH, "state", "migrate", "--policy", policy],
      env,
      stdout: "null",
      stderr: "piped",
    }).output();
    equal(migrated.code, 0, new TextDecoder().decode(migrated.stderr));
    for (let n = 0; n < 3; n++) replicas.push(await startReplica(policy, env));
    const [a, b, c] = replicas as [Replica, Replica, Replica];

    const started = await call(a, "run_command", { command: "sleep 30", background: true });
    equal(started.code, "JOB_RUNNING", JSON.stringify(started));
    const jobId = started.job_id!;
    ok(typeof jobId === "string");

    const listed = await call(b, "job_list", {});
    ok(listed.jobs?.some((job) => job.job_id === jobId), JSON.stringify(listed));
    const running = await call(b, "job_status", { job_id: jobId });
    equal(running.job?.state, "running", JSON.stringify(running));

    const cancelled = await call(c, "job_cancel", { job_id: jobId });
    equal(cancelled.code, "OK", JSON.stringify(cancelled));
    // B waits (bounded) for the end that A records once it saw the cancel.
    const ended = await call(b, "job_status", { job_id: jobId, wait_ms: 20_000 });
    equal(ended.job?.state, "ended", JSON.stringify(ended));
    equal(ended.job?.code, "CANCELLED", JSON.stringify(ended));
    const audit = await Deno.readTextFile(join(dir, "log/audit.jsonl"));
    ok(audit.includes('"job_cancel_requested"'), "the cancel is audited");
    ok(audit.includes('"job_ended"'), "A recorded the end");

    // A replica dies with a job running: the job is lost, never running forever.
    const orphan = await call(a, "run_command", { command: "sleep 30", background: true });
    equal(orphan.code, "JOB_RUNNING", JSON.stringify(orphan));
    Deno.kill(a.pid, "SIGKILL");
    await a.child.status;
    let seen: JobView = {};
    for (let tries = 0; tries < 40; tries++) {
      seen = await call(b, "job_status", { job_id: orphan.job_id });
      if (seen.job?.state === "lost") break;
      await new Promise((resolve) => setTimeout(resolve, 500));
    }
    equal(seen.job?.state, "lost", JSON.stringify(seen));
    const fromC = await call(c, "job_status", { job_id: orphan.job_id });
    equal(fromC.job?.state, "lost", "every replica agrees");
  } finally {
    for (const replica of replicas) await stopReplica(replica).catch(() => {});
    await database.stop();
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("behind a real nginx round-robin over three replicas, one 2026-07-28 client starts, waits for and cancels a job wherever each call lands", async () => {
  await Deno.stat(NGINX); // installed with the test prerequisites: fail loudly without it
  const database = await postgresOrSkip("jobs behind nginx on PostgreSQL");
  if (database === null) return;
  const dir = Deno.realPathSync(await Deno.makeTempDir({ prefix: "htmcp-jobs-nginx-" }));
  const nginxDir = Deno.realPathSync(await Deno.makeTempDir({ prefix: "htmcp-nginx-" }));
  const replicas: Replica[] = [];
  let nginx: { stop(): Promise<void> } | null = null;
  try {
    const lb = freePort();
    const policy = await writePolicy(dir, await database.createDatabase("jobs_nginx"), [
      `[http]`,
      `base_url = "http://127.0.0.1:${lb}"`,
    ]);
    const migrated = await new Deno.Command(DENO, {
      args: ["run", "-A", LAUNCH, "state", "migrate", "--policy", policy],
      stdout: "null",
      stderr: "piped",
    }).output();
    equal(migrated.code, 0, new TextDecoder().decode(migrated.stderr));
    // Each replica binds a port of its own choosing (port 0) and says which:
    // a port picked in advance could be taken by another process meanwhile.
    for (let n = 0; n < 3; n++) replicas.push(await startReplica(policy, {}, "127.0.0.1:0", false));
    const ports = replicas.map((replica) => new URL(replica.listening).port);
    nginx = await startNginx(
      nginxDir,
      lb,
      `  upstream htmcp { ${ports.map((port) => `server 127.0.0.1:${port};`).join(" ")} }
  server {
    listen 127.0.0.1:${lb};
    location / { proxy_pass http://htmcp; proxy_read_timeout 3600s; }
  }`,
    );
    const client = await connectV2Http(`http://127.0.0.1:${lb}/mcp`, "2026-07-28");
    try {
      const tool = async (name: string, args: Record<string, unknown>) =>
        (await client.callTool({ name, arguments: args }, { timeout: 60_000 }))
          .structuredContent as JobView;
      const started = await tool("run_command", { command: "sleep 30", background: true });
      equal(started.code, "JOB_RUNNING", JSON.stringify(started));
      for (let n = 0; n < 6; n++) {
        const status = await tool("job_status", { job_id: started.job_id });
        equal(status.job?.state, "running", JSON.stringify(status));
      }
      equal((await tool("job_cancel", { job_id: started.job_id })).code, "OK");
      const ended = await tool("job_status", { job_id: started.job_id, wait_ms: 20_000 });
      equal(ended.job?.code, "CANCELLED", JSON.stringify(ended));
      const output = await tool("job_output", { job_id: started.job_id, stream: "stdout" });
      equal(output.code, "OK", JSON.stringify(output));
      for (let n = 0; n < 6; n++) {
        equal((await tool("run_command", { command: `echo spread-${n}` })).code, "OK");
      }
    } finally {
      await client.close().catch(() => {});
    }
    // The calls were spread: the shared log's attempts name more than one
    // replica's writer (each replica stamps its own on every record).
    const records = (await Deno.readTextFile(join(dir, "log/audit.jsonl"))).split("\n")
      .filter((line) => line !== "").map((line) => JSON.parse(line));
    const writers = new Set(
      records.filter((r) =>
        r.kind === "attempt" && String(r.command_raw).startsWith("echo spread-")
      )
        .map((r) => r.writer),
    );
    ok(writers.size >= 2, `the calls reached ${writers.size} replica(s)`);
    const cancels = records.filter((r) => r.event === "job_cancel_requested");
    equal(cancels.length, 1, "one cancel, audited once");
  } finally {
    for (const replica of replicas) await stopReplica(replica).catch(() => {});
    await nginx?.stop();
    await database.stop();
    await Deno.remove(dir, { recursive: true });
    await Deno.remove(nginxDir, { recursive: true });
  }
});
