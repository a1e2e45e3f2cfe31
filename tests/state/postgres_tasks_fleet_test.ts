/**
 * 2026-07-28 tasks in a fleet: two replicas on one PostgreSQL database, each
 * started under its generated permission set, raw 2026 JSON-RPC to each (the
 * SDK v2 client has no API for the Tasks extension). A task created through
 * A is the same task through B, a `tasks/cancel` sent to B kills the tree A
 * runs, and a replica killed with SIGKILL leaves its task `failed`, never
 * `working`, on the one that remains.
 */
import { deepEqual, equal, match, ok } from "node:assert/strict";
import { join } from "node:path";
import { LAUNCH, readServingUrl } from "../../scripts/conformance.ts";
import { planLaunch } from "../../scripts/launch.ts";
import { prepareJail } from "../_helpers/jail.ts";
import { postgresOrSkip } from "../_helpers/postgres.ts";
import { REPO } from "../_helpers/stdio_harness.ts";
import { uniqueSleep, waitForMarker } from "../exec/_fixtures.ts";
import {
  assertAck,
  assertCreateTaskResult,
  ok200,
  rpcAt,
  run,
  settle,
  waitReaped,
} from "../e2e/_modern_task_script.ts";

const DENO = Deno.execPath();
const RETENTION_MS = 3_600_000;

async function writePolicy(dir: string, url: string): Promise<string> {
  // The URL in an owner-only file, so the launch plan computed here reads the same policy.
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
      `commands = ["sleep", "sh"]`,
      `[auth]`,
      `mode = "none"`,
      `[state]`,
      `backend = "postgres"`,
      `url_file = "state-url"`,
      "",
    ].join("\n"),
  );
  return policy;
}

interface Replica {
  readonly child: Deno.ChildProcess;
  readonly url: URL;
}

async function startReplica(policy: string): Promise<Replica> {
  const plan = await planLaunch(["serve", "--policy", policy, "--http", "127.0.0.1:0"], REPO);
  if (!plan.ok) throw new Error(plan.message);
  const child = new Deno.Command(DENO, {
    args: [...plan.argv],
    env: { NO_COLOR: "1" },
    stdin: "null",
    stdout: "null",
    stderr: "piped",
  }).spawn();
  const serving = await readServingUrl(child);
  return { child, url: new URL(serving.url) };
}

async function stopReplica(replica: Replica): Promise<void> {
  // Signalled only while it is still the child this test started.
  const status = await Promise.race([
    replica.child.status,
    new Promise<null>((resolve) => setTimeout(() => resolve(null), 0)),
  ]);
  if (status === null) replica.child.kill("SIGTERM");
  await replica.child.status;
}

Deno.test("2026-07-28 tasks on the PostgreSQL backend: created through A, read and cancelled through B; a SIGKILLed replica's task is failed", async () => {
  const database = await postgresOrSkip("2026 tasks across replicas on PostgreSQL");
  if (database === null) return;
  const dir = Deno.realPathSync(await Deno.makeTempDir({ prefix: "htmcp-tasks-fleet-" }));
  const replicas: Replica[] = [];
  try {
    const policy = await writePolicy(dir, await database.createDatabase("tasks"));
    const migrated = await new Deno.Command(DENO, {
      args: ["run", "-A", LAUNCH, "state", "migrate", "--policy", policy],
      stdout: "null",
      stderr: "piped",
    }).output();
    equal(migrated.code, 0, new TextDecoder().decode(migrated.stderr));
    for (let n = 0; n < 2; n++) replicas.push(await startReplica(policy));
    const [a, b] = replicas as [Replica, Replica];
    const atA = rpcAt(a.url, null);
    const atB = rpcAt(b.url, null);

    const m = uniqueSleep();
    const taskId = assertCreateTaskResult(
      await run(atA, { command: `sh -c 'sleep ${m} & sleep ${m}'`, background: true }),
      RETENTION_MS,
    );
    const pids = await waitForMarker(m, 2);
    const here = await ok200(atA, "tasks/get", { taskId });
    const there = await ok200(atB, "tasks/get", { taskId });
    deepEqual(
      [there.status, there.createdAt, there.ttlMs],
      [here.status, here.createdAt, here.ttlMs],
    );
    equal(there.status, "working");
    // B does not run it: the cancel goes through the store, and A kills the tree.
    assertAck(await ok200(atB, "tasks/cancel", { taskId }));
    await waitReaped(pids);
    equal((await settle(atA, taskId)).status, "cancelled");
    equal((await settle(atB, taskId)).status, "cancelled");

    // A dies with a task running: on B it becomes failed, with the reason as its error.
    const m2 = uniqueSleep();
    const orphan = assertCreateTaskResult(
      await run(atA, { command: `sleep ${m2}`, background: true }),
      RETENTION_MS,
    );
    await waitForMarker(m2, 1);
    Deno.kill(a.child.pid, "SIGKILL");
    await a.child.status;
    const failed = await settle(atB, orphan, 30_000);
    equal(failed.status, "failed");
    equal("result" in failed, false);
    match(String((failed.error as Record<string, unknown>).message), /stopped without recording/);
    const audit = await Deno.readTextFile(join(dir, "log/audit.jsonl"));
    ok(audit.includes('"job_lost"'), "the loss is audited");
  } finally {
    for (const replica of replicas) await stopReplica(replica).catch(() => {});
    await database.stop();
    await Deno.remove(dir, { recursive: true });
  }
});
