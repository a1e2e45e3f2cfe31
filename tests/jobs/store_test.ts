/**
 * The job store on a real state dir: another owner's job is absent, a
 * malformed record is absent, a running job whose server stopped beating is
 * turned lost (never reported running), a live server's job is not, and an
 * ended job is deleted with its output after the retention time. Files are
 * owner-only.
 */
import { deepEqual, equal } from "node:assert/strict";
import { type JobRecord, JobStore, LOST_AFTER_MS } from "../../src/jobs/mod.ts";
import { LocalStateStore } from "../../src/state/mod.ts";

const RETENTION = 60_000;

function record(id: string, changes: Partial<JobRecord> = {}): JobRecord {
  return {
    id,
    owner: "local",
    callId: "call-1",
    command: "sleep 9",
    argv: ["sleep", "9"],
    cwd: ".",
    origin: "background",
    state: "running",
    code: null,
    exitCode: null,
    reason: "The command is running.",
    startedMs: 1_000,
    endedMs: null,
    timeoutMs: 10_000,
    stdoutBytes: 0,
    stderrBytes: 0,
    truncated: false,
    writer: "writer-a",
    pid: 4242,
    cancelRequestedMs: null,
    tail: "",
    ...changes,
  };
}

async function withStore(
  fn: (store: JobStore, clock: { now: number }, dir: string) => Promise<void>,
) {
  const dir = await Deno.makeTempDir({ prefix: "htmcp-job-store-" });
  const clock = { now: 10_000 };
  try {
    await fn(
      new JobStore(new LocalStateStore(`${dir}/state`), () => clock.now),
      clock,
      `${dir}/state`,
    );
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
}

Deno.test("JobStore.get() answers another owner's job and a malformed record as absent", async () => {
  await withStore(async (store, _clock, dir) => {
    await store.put(record("job_a"));
    equal((await store.get("local", "job_a"))?.id, "job_a");
    equal(await store.get("client:other", "job_a"), null);
    deepEqual(await store.list("client:other"), []);
    await Deno.writeTextFile(`${dir}/jobs/job_b.json`, JSON.stringify({ id: "job_b" }));
    equal(await store.get("local", "job_b"), null);
    equal(await store.get("local", "../jobs/job_a"), null);
    equal((Deno.statSync(`${dir}/jobs/job_a.json`).mode ?? 0) & 0o777, 0o600);
  });
});

Deno.test("JobStore.sweep() turns a running job of a silent server lost, and leaves a beating one's", async () => {
  await withStore(async (store, clock) => {
    await store.beat("writer-live");
    await store.put(record("job_dead", { writer: "writer-gone" }));
    await store.put(record("job_live", { writer: "writer-live" }));
    clock.now += LOST_AFTER_MS - 1;
    const first = await store.sweep("writer-self", () => false, RETENTION);
    deepEqual(first.lost.map((r) => r.id), ["job_dead"]);
    equal((await store.get("local", "job_dead"))?.state, "lost");
    equal((await store.get("local", "job_live"))?.state, "running");
    // Its heartbeat ages past the bound: lost too.
    clock.now += 2;
    const second = await store.sweep("writer-self", () => false, RETENTION);
    deepEqual(second.lost.map((r) => r.id), ["job_live"]);
  });
});

Deno.test("JobStore.sweep() trusts this server's own running jobs only while it runs them", async () => {
  await withStore(async (store) => {
    await store.put(record("job_mine", { writer: "writer-self" }));
    equal((await store.sweep("writer-self", () => true, RETENTION)).lost.length, 0);
    equal((await store.sweep("writer-self", () => false, RETENTION)).lost.length, 1);
  });
});

Deno.test("JobStore.sweep() deletes an ended job and its output after the retention time", async () => {
  await withStore(async (store, clock) => {
    await store.put(record("job_old", { state: "ended", code: "OK", endedMs: clock.now }));
    await store.putOutput("job_old", { stdout: "x", stderr: "" });
    clock.now += RETENTION;
    equal((await store.sweep("w", () => false, RETENTION)).expired.length, 0);
    equal((await store.output("local", "job_old"))?.stdout, "x");
    clock.now += 1;
    const report = await store.sweep("w", () => false, RETENTION);
    deepEqual(report.expired.map((r) => r.id), ["job_old"]);
    equal(await store.get("local", "job_old"), null);
    equal(await store.output("local", "job_old"), null);
  });
});

Deno.test("JobStore.sweep() removes the heartbeat of a server gone longer than the retention time", async () => {
  await withStore(async (store, clock, dir) => {
    await store.beat("writer-old");
    await store.beat("writer-self");
    clock.now += RETENTION + LOST_AFTER_MS;
    await store.sweep("writer-self", () => false, RETENTION);
    equal(await Deno.stat(`${dir}/job_servers/writer-old.json`).then(() => true), true);
    clock.now += 1;
    await store.sweep("writer-self", () => false, RETENTION);
    equal(
      await Deno.stat(`${dir}/job_servers/writer-old.json`).then(() => true, () => false),
      false,
    );
    equal(await Deno.stat(`${dir}/job_servers/writer-self.json`).then(() => true), true);
  });
});

Deno.test("JobStore.sweep() turns a job awaiting its approval lost when its server stopped beating", async () => {
  await withStore(async (store, clock) => {
    await store.put(
      record("job_held", { state: "awaiting_approval", writer: "writer-gone", approvalId: "a1" }),
    );
    await store.beat("writer-self");
    const report = await store.sweep("writer-self", () => false, RETENTION);
    deepEqual(report.lost.map((r) => r.id), ["job_held"]);
    const lost = await store.get("local", "job_held");
    equal(lost?.state, "lost");
    equal(lost?.approvalId, "a1");
    equal(/nothing ran/.test(lost?.reason ?? ""), true, lost?.reason);
    // A held job of this very server is alive while it holds it.
    await store.put(
      record("job_mine", { state: "awaiting_approval", writer: "writer-self" }),
    );
    clock.now += 1;
    equal((await store.sweep("writer-self", (id) => id === "job_mine", RETENTION)).lost.length, 0);
    equal((await store.get("local", "job_mine"))?.state, "awaiting_approval");
  });
});
