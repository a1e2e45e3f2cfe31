/**
 * A prompted call that outlives `approval.wait_ms` becomes a job awaiting its
 * approval: the real server over stdio, the real SDK client without
 * elicitation, the real `htmcp approvals` CLI in another process. The held
 * command touches `canary.txt`; the file in the jail (and its absence next
 * to the jail) proves whether anything ran.
 */
import assert from "node:assert/strict";
import { exists, type Harness, startHarness } from "../_helpers/stdio_harness.ts";
import { approvals, listed, verifyAudit } from "./_approvals.ts";

const RULES = `
[[rules]]
command = "touch"
decision = "prompt"
args = ["canary.txt"]
justification = "touching the canary stands for a risky command"
`;

interface JobReply {
  ok: boolean;
  code: string;
  reason: string;
  job?: { job_id: string; state: string; code: string | null; approval_id?: string };
  jobs?: { job_id: string; state: string }[];
}

function start(approval: string, files: Record<string, string> = {}): Promise<Harness> {
  return startHarness({
    topToml: 'state_dir = "state"',
    extraToml: `${RULES}\n[approval]\nrequire = "operator"\n${approval}\n`,
    files,
  });
}

async function jobTool(h: Harness, tool: string, args: Record<string, unknown>) {
  return await h.call(tool, args) as unknown as JobReply;
}

async function nothingRan(h: Harness): Promise<void> {
  assert.equal(await exists(`${h.jail}/canary.txt`), false, "nothing ran in the jail");
  assert.equal(await exists(`${h.dir}/canary.txt`), false, "nothing ran outside the jail");
}

/** Stops the server (stdin closed, as a client does) and verifies the audit chain. */
async function stopAndVerify(h: Harness): Promise<Record<string, unknown>[]> {
  await h.client.close();
  // The server writes its last records as it stops; the chain must verify after.
  for (let i = 0; i < 50; i++) {
    if ((await h.records()).some((r) => r.event === "server_stop")) break;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  const verified = await verifyAudit(h);
  assert.equal(verified.code, 0, verified.stderr + verified.stdout);
  return await h.records();
}

Deno.test("a prompted call past wait_ms becomes a job; htmcp approvals allow from another process runs it once", async () => {
  const h = await start("wait_ms = 300\nttl_s = 120");
  try {
    assert.match((await h.describePolicy()).sandbox, /kernel sandbox \(bubblewrap\)/);
    const raw = await h.client.callTool({
      name: "run_command",
      arguments: { command: "touch canary.txt" },
    });
    const pending = raw.structuredContent as { code: string; job_id: string; approval_id: string };
    assert.equal(pending.code, "APPROVAL_PENDING");
    assert.match(pending.job_id, /^job_/);
    assert.match(pending.approval_id, /^[0-9a-f]{32}$/);
    const text = (raw.content as { type: string; text?: string }[])[0]?.text ?? "";
    assert.match(text, new RegExp(`job_id: ${pending.job_id}`));
    assert.match(text, new RegExp(`approval_id: ${pending.approval_id}`));
    await nothingRan(h);

    const waiting = await jobTool(h, "job_status", { job_id: pending.job_id });
    assert.deepEqual(
      [waiting.job?.state, waiting.job?.approval_id],
      ["awaiting_approval", pending.approval_id],
    );
    const list = await jobTool(h, "job_list", {});
    assert.deepEqual(list.jobs?.map((j) => [j.job_id, j.state]), [
      [pending.job_id, "awaiting_approval"],
    ]);
    assert.equal((await listed(h))[0]?.job_id, pending.job_id);

    // An identical call meanwhile is told the same job: no second approval.
    const again = await h.call("run_command", { command: "touch canary.txt" });
    assert.deepEqual([again.code, again.job_id, again.approval_id], [
      "APPROVAL_PENDING",
      pending.job_id,
      pending.approval_id,
    ]);
    assert.equal((await listed(h)).length, 1);

    // job_status waits through the approval and the run.
    const status = jobTool(h, "job_status", { job_id: pending.job_id, wait_ms: 25_000 });
    const allowed = await approvals(h, "allow", pending.approval_id);
    assert.equal(allowed.code, 0, allowed.stderr);
    assert.match(allowed.stdout, new RegExp(`as job ${pending.job_id}`));
    const done = await status;
    assert.deepEqual([done.job?.state, done.job?.code], ["ended", "OK"], done.reason);
    assert.ok(await exists(`${h.jail}/canary.txt`), "the approved run created the canary");
    assert.equal(await exists(`${h.dir}/canary.txt`), false);
    assert.deepEqual((await listed(h)).map((r) => r.state), ["used"]);

    const records = await stopAndVerify(h);
    const id = pending.approval_id;
    const awaiting = records.find((r) => r.event === "job_awaiting_approval");
    assert.deepEqual([awaiting?.job_id, awaiting?.approval_id], [pending.job_id, id]);
    const answered = records.find((r) => r.event === "approval_answered");
    assert.deepEqual([answered?.approval_id, answered?.answer], [id, "allow"]);
    assert.match(String(answered?.by), /^cli:operator-test/);
    const runs = records.filter((r) => r.kind === "attempt" && r.verdict === "allow");
    assert.equal(runs.length, 1, "it ran once");
    assert.equal(runs[0]?.approval_id, id);
    assert.equal(runs[0]?.call_id, awaiting?.call_id, "the run is the call that waited");
    const order = [awaiting, answered, runs[0]].map((r) => records.indexOf(r!));
    assert.deepEqual(order, [...order].sort((a, b) => a - b), "waiting, answer, then the attempt");
    const ended = records.find((r) => r.event === "job_ended" && r.job_id === pending.job_id);
    assert.equal(ended?.result_code, "OK");
  } finally {
    await h.close();
  }
});

Deno.test("an awaiting job ends without running when denied, when its approval expires, or when cancelled", async () => {
  const h = await start("wait_ms = 300\nttl_s = 3");
  try {
    assert.match((await h.describePolicy()).sandbox, /kernel sandbox \(bubblewrap\)/);
    // Denied.
    const first = await h.call("run_command", { command: "touch canary.txt" });
    assert.equal(first.code, "APPROVAL_PENDING");
    assert.equal((await approvals(h, "deny", first.approval_id!)).code, 0);
    const denied = await jobTool(h, "job_status", { job_id: first.job_id, wait_ms: 10_000 });
    assert.deepEqual([denied.job?.state, denied.job?.code], ["ended", "APPROVAL_DENIED"]);
    await nothingRan(h);

    // Cancelled: the job and its approval are withdrawn.
    const second = await h.call("run_command", { command: "touch canary.txt" });
    assert.equal(second.code, "APPROVAL_PENDING");
    assert.notEqual(second.approval_id, first.approval_id);
    const cancelled = await jobTool(h, "job_cancel", { job_id: second.job_id });
    assert.deepEqual([cancelled.code, cancelled.job?.state, cancelled.job?.code], [
      "OK",
      "ended",
      "CANCELLED",
    ]);
    const late = await approvals(h, "allow", second.approval_id!);
    assert.equal(late.code, 1);
    assert.match(late.stderr, /it is withdrawn, not pending/);
    await nothingRan(h);

    // Expired: nobody answered within ttl_s.
    const third = await h.call("run_command", { command: "touch canary.txt" });
    assert.equal(third.code, "APPROVAL_PENDING");
    const expired = await jobTool(h, "job_status", { job_id: third.job_id, wait_ms: 15_000 });
    assert.deepEqual([expired.job?.state, expired.job?.code], ["ended", "APPROVAL_EXPIRED"]);
    const tooLate = await approvals(h, "allow", third.approval_id!);
    assert.equal(tooLate.code, 1);
    assert.match(tooLate.stderr, /it is expired, not pending/);
    await nothingRan(h);

    const records = await stopAndVerify(h);
    assert.equal(records.some((r) => r.kind === "attempt" && r.verdict === "allow"), false);
    const refusals = records.filter((r) => r.kind === "attempt" && r.verdict === "deny")
      .map((r) => [r.code, r.approval_id]);
    assert.deepEqual(refusals, [
      ["APPROVAL_DENIED", first.approval_id],
      ["CANCELLED", second.approval_id],
      ["APPROVAL_EXPIRED", third.approval_id],
    ]);
    const ends = records.filter((r) => r.event === "job_ended").map((
      r,
    ) => [r.job_id, r.result_code]);
    assert.deepEqual(ends, [
      [first.job_id, "APPROVAL_DENIED"],
      [second.job_id, "CANCELLED"],
      [third.job_id, "APPROVAL_EXPIRED"],
    ]);
    assert.ok(
      records.some((r) => r.event === "job_cancel_requested" && r.job_id === second.job_id),
    );
    assert.ok(
      records.some((r) => r.event === "approval_expired" && r.approval_id === third.approval_id),
    );
  } finally {
    await h.close();
  }
});

Deno.test("an approved job whose command now resolves differently does not run", async () => {
  // `x*.log` expands in the jail: a file added after the request changes the
  // run, so the approval no longer binds what would run.
  const h = await start("wait_ms = 300\nttl_s = 120", { "x1.log": "" });
  try {
    assert.match((await h.describePolicy()).sandbox, /kernel sandbox \(bubblewrap\)/);
    const pending = await h.call("run_command", { command: "touch canary.txt x*.log" });
    assert.equal(pending.code, "APPROVAL_PENDING", pending.policy_reason);
    await Deno.writeTextFile(`${h.jail}/x2.log`, "");
    assert.equal((await approvals(h, "allow", pending.approval_id!)).code, 0);
    const ended = await jobTool(h, "job_status", { job_id: pending.job_id, wait_ms: 10_000 });
    assert.deepEqual([ended.job?.state, ended.job?.code], ["ended", "APPROVAL_EXPIRED"]);
    assert.match(ended.job ? ended.reason : "", /no longer resolves/);
    await nothingRan(h);
    const records = await stopAndVerify(h);
    assert.equal(records.some((r) => r.kind === "attempt" && r.verdict === "allow"), false);
  } finally {
    await h.close();
  }
});

Deno.test("a server that stops with an awaiting job records it ended and withdraws its approval; nothing runs after", async () => {
  const h = await start("wait_ms = 300\nttl_s = 120");
  try {
    assert.match((await h.describePolicy()).sandbox, /kernel sandbox \(bubblewrap\)/);
    const pending = await h.call("run_command", { command: "touch canary.txt" });
    assert.equal(pending.code, "APPROVAL_PENDING");
    const records = await stopAndVerify(h);
    const ended = records.find((r) => r.event === "job_ended" && r.job_id === pending.job_id);
    assert.equal(ended?.result_code, "CANCELLED");
    assert.match(String(ended?.reason), /server stopped/);
    assert.deepEqual((await listed(h)).map((r) => r.state), ["withdrawn"]);
    const late = await approvals(h, "allow", pending.approval_id!);
    assert.equal(late.code, 1);
    await nothingRan(h);
  } finally {
    await h.close();
  }
});

Deno.test('an allowlist entry with decision = "prompt" holds every run of it; describe_policy and explain_command show the hold', async () => {
  const h = await startHarness({
    topToml: 'state_dir = "state"',
    allow: ["ls", {
      name: "touch",
      decision: "prompt",
      justification: "touching stands for publishing",
    }],
    extraToml: '[approval]\nrequire = "operator"\nwait_ms = 300\nttl_s = 120\n',
  });
  try {
    const described = await h.describePolicy();
    assert.match(described.sandbox, /kernel sandbox \(bubblewrap\)/);
    const rules = described.argument_rules as { command: string; rule: string }[];
    assert.deepEqual(rules, [{
      command: "touch",
      rule: "Held for a human's approval on every run: touching stands for publishing",
    }]);
    const explained = await h.call("explain_command", { command: "touch other.txt" });
    assert.equal(explained.code, "OK");
    assert.match(explained.policy_reason, /its allowlist entry holds every run until a human/);
    // A refusal stays a refusal: nobody is asked about an escape.
    const escape = await h.call("run_command", { command: "touch ../canary.txt" });
    assert.equal(escape.code, "PATH_ESCAPE");

    const pending = await h.call("run_command", { command: "touch canary.txt" });
    assert.equal(pending.code, "APPROVAL_PENDING");
    await nothingRan(h);
    const [record] = await listed(h);
    assert.equal(record?.id, pending.approval_id);
    assert.equal((record as unknown as { rule: string }).rule, "touch (every run)");
    assert.equal((await approvals(h, "allow", pending.approval_id!)).code, 0);
    const done = await jobTool(h, "job_status", { job_id: pending.job_id, wait_ms: 20_000 });
    assert.deepEqual([done.job?.state, done.job?.code], ["ended", "OK"], done.reason);
    assert.ok(await exists(`${h.jail}/canary.txt`));
    const records = await stopAndVerify(h);
    assert.equal(
      records.filter((r) => r.kind === "attempt" && r.verdict === "allow").length,
      1,
      "only the approved run ran",
    );
    assert.ok(
      records.some((r) => r.event === "approval_requested" && r.rule === "touch (every run)"),
    );
  } finally {
    await h.close();
  }
});
