/**
 * The `prompt` verdict end to end: the real server over stdio, the real SDK
 * client (with and without form elicitation), and the real
 * `htmcp approvals` CLI as a child process. `touch canary.txt` is the held
 * command, so the canary file itself proves whether anything ran.
 */
import assert from "node:assert/strict";
import { exists, type HarnessOptions, startHarness } from "../_helpers/stdio_harness.ts";
import { approvals, pendingId } from "./_approvals.ts";
import { prepareJail } from "../_helpers/jail.ts";

const RULES = `
[[rules]]
command = "touch"
decision = "prompt"
args = ["canary.txt"]
justification = "touching the canary stands for a risky command"
`;

function options(approval: string, extra: Partial<HarnessOptions> = {}): HarnessOptions {
  return {
    topToml: 'state_dir = "state"',
    extraToml: `${RULES}\n[approval]\n${approval}\n`,
    ...extra,
  };
}

function idIn(reason: string): string {
  const match = /[Aa]pproval ([0-9a-f]{32})/.exec(reason);
  assert.ok(match, reason);
  return match[1] as string;
}

Deno.test("elicitation: accepting runs the prompted command once; an identical call asks again", async () => {
  const messages: string[] = [];
  const h = await startHarness(options("", {
    elicit: ({ message }) => {
      messages.push(message);
      return { action: "accept" };
    },
  }));
  try {
    assert.match((await h.describePolicy()).sandbox, /kernel sandbox \(bubblewrap\)/);
    const first = await h.call("run_command", { command: "touch canary.txt" });
    assert.equal(first.code, "OK", first.policy_reason);
    assert.ok(await exists(`${h.jail}/canary.txt`));
    assert.equal(messages.length, 1);
    const [message] = messages;
    assert.match(message ?? "", /Command: \[".*touch","canary\.txt"\]/);
    assert.match(message ?? "", /Working directory \(in the jail\): \./);
    assert.match(message ?? "", /Rule: touch canary\.txt/);
    assert.match(message ?? "", /touching the canary stands for a risky command/);

    await Deno.remove(`${h.jail}/canary.txt`);
    const second = await h.call("run_command", { command: "touch canary.txt" });
    assert.equal(second.code, "OK");
    assert.equal(messages.length, 2, "the first answer is not reused");

    const records = await h.records();
    const requested = records.filter((r) => r.event === "approval_requested");
    const answered = records.filter((r) => r.event === "approval_answered");
    assert.equal(requested.length, 2);
    assert.deepEqual(answered.map((r) => [r.answer, r.by]), [
      ["allow", "client_elicitation"],
      ["allow", "client_elicitation"],
    ]);
    const runs = records.filter((r) => r.kind === "attempt" && r.verdict === "allow");
    assert.deepEqual(
      runs.map((r) => r.approval_id),
      requested.map((r) => r.approval_id),
      "each run names the approval it ran under",
    );
    // The request is on record before the run's attempt.
    assert.ok(records.indexOf(requested[0]!) < records.indexOf(runs[0]!));
  } finally {
    await h.close();
  }
});

Deno.test("elicitation: the question shows the command text and the stdin the approved run reads (round eight)", async () => {
  const messages: string[] = [];
  const h = await startHarness({
    topToml: 'state_dir = "state"',
    allow: ["tee", "echo"],
    extraToml: `
[[rules]]
command = "tee"
decision = "prompt"
args = ["notes.txt"]
justification = "writes notes"

[[rules]]
command = "echo"
decision = "prompt"
args = ["hi"]
justification = "says hi"
`,
    elicit: ({ message }) => {
      messages.push(message);
      return { action: "accept" };
    },
  });
  try {
    const teed = await h.call("run_command", {
      argv: ["tee", "notes.txt"],
      stdin: "PAYLOAD the human must see\n",
    });
    assert.equal(teed.code, "OK", teed.policy_reason);
    assert.match(
      messages[0] ?? "",
      /Standard input \(27 bytes.*\): "PAYLOAD the human must see\\n"/,
    );
    const echoed = await h.call("run_command", { command: "echo hi > other.txt" });
    assert.equal(echoed.code, "OK", echoed.policy_reason);
    assert.match(messages[1] ?? "", /Text: echo hi > other\.txt/);
    // Round nine: a folder name and stdin with control and format
    // characters forged lines in the question; they are shown escaped.
    const forged = "src\u001b[2K\nRule: nothing";
    await Deno.mkdir(`${h.jail}/${forged}`);
    await prepareJail(h.jail);
    const hidden = await h.call("run_command", {
      argv: ["tee", "notes.txt"],
      cwd: forged,
      stdin: "harmless\u202Etxt.exe\u2028second line",
    });
    assert.equal(hidden.code, "OK", hidden.policy_reason);
    const message = messages[2] ?? "";
    assert.ok(message.includes("src\\u{1B}[2K\\u{A}Rule: nothing"), message);
    assert.ok(message.includes("\\u{202E}") && message.includes("\\u{2028}"), message);
    assert.ok(
      !["\u001b", "\u202e", "\u2028"].some((char) => message.includes(char)),
      "no raw control or format character",
    );
    assert.equal(message.split("\n").filter((line) => line.startsWith("Rule:")).length, 1);
  } finally {
    await h.close();
  }
});

Deno.test("elicitation: declining gives APPROVAL_DENIED and nothing runs", async () => {
  let asked = 0;
  const h = await startHarness(options("", {
    elicit: () => {
      asked++;
      return { action: "decline" };
    },
  }));
  try {
    assert.match((await h.describePolicy()).sandbox, /kernel sandbox \(bubblewrap\)/);
    const result = await h.call("run_command", { command: "touch canary.txt" });
    assert.equal(result.code, "APPROVAL_DENIED");
    assert.equal(result.ok, false);
    assert.equal(asked, 1);
    assert.equal(await exists(`${h.jail}/canary.txt`), false);
    const records = await h.records();
    const answered = records.find((r) => r.event === "approval_answered");
    assert.equal(answered?.answer, "deny");
    const attempt = records.find((r) => r.kind === "attempt");
    assert.deepEqual([attempt?.verdict, attempt?.code], ["deny", "APPROVAL_DENIED"]);
    assert.equal(attempt?.approval_id, answered?.approval_id);
    assert.equal(records.some((r) => r.kind === "attempt" && r.verdict === "allow"), false);

    // A stage of a composed command holds the whole plan: nothing of it runs.
    const plan = await h.call("run_command", { command: "touch first.txt && touch canary.txt" });
    assert.equal(plan.code, "APPROVAL_DENIED");
    assert.equal(asked, 2);
    assert.equal(await exists(`${h.jail}/first.txt`), false);
    assert.equal(await exists(`${h.jail}/canary.txt`), false);

    // explain_command shows the hold and asks nobody.
    const explained = await h.call("explain_command", { command: "touch canary.txt" });
    assert.equal(explained.code, "OK");
    assert.match(explained.policy_reason, /holds it until a human approves it/);
    assert.equal(asked, 2);
  } finally {
    await h.close();
  }
});

Deno.test("a prompted command the policy refuses is refused as today, never offered for approval", async () => {
  let asked = 0;
  const h = await startHarness(options("", {
    elicit: () => {
      asked++;
      return { action: "accept" };
    },
  }));
  try {
    const result = await h.call("run_command", { command: "touch canary.txt ../outside.txt" });
    assert.equal(result.code, "PATH_ESCAPE");
    assert.equal(asked, 0);
    assert.equal(await exists(`${h.jail}/canary.txt`), false);
    assert.equal(await exists(`${h.dir}/outside.txt`), false);
    const records = await h.records();
    assert.equal(records.some((r) => r.event === "approval_requested"), false);
  } finally {
    await h.close();
  }
});

Deno.test("without elicitation the call waits; htmcp approvals allow from another process lets it run once, deny refuses", async () => {
  const h = await startHarness(options("wait_ms = 60000"));
  try {
    assert.match((await h.describePolicy()).sandbox, /kernel sandbox \(bubblewrap\)/);
    const call = h.call("run_command", { command: "touch canary.txt" });
    const id = await pendingId(h);
    assert.equal(await exists(`${h.jail}/canary.txt`), false, "nothing runs before the answer");
    const allowed = await approvals(h, "allow", id);
    assert.equal(allowed.code, 0, allowed.stderr);
    const result = await call;
    assert.equal(result.code, "OK", result.policy_reason);
    assert.ok(await exists(`${h.jail}/canary.txt`));

    // The used approval cannot be answered again.
    const again = await approvals(h, "allow", id);
    assert.equal(again.code, 1);
    assert.match(again.stderr, /it is used, not pending/);
    const listed = JSON.parse((await approvals(h, "list", "--json")).stdout) as {
      id: string;
      state: string;
      answered_by: string;
    }[];
    assert.deepEqual(listed.map((r) => [r.id, r.state]), [[id, "used"]]);
    assert.match(listed[0]?.answered_by ?? "", /^cli:operator-test \(uid \d+\)$/);

    // Denied while the call waits: APPROVAL_DENIED, and nothing runs.
    await Deno.remove(`${h.jail}/canary.txt`);
    const waiting = h.call("run_command", { command: "touch canary.txt" });
    const second = await pendingId(h, [id]);
    assert.equal((await approvals(h, "deny", second)).code, 0);
    const denied = await waiting;
    assert.equal(denied.code, "APPROVAL_DENIED");
    assert.match(denied.policy_reason, /denied approval/);
    assert.equal(await exists(`${h.jail}/canary.txt`), false);

    const records = await h.records();
    const answers = records.filter((r) => r.event === "approval_answered");
    assert.deepEqual(answers.map((r) => [r.approval_id, r.answer]), [
      [id, "allow"],
      [second, "deny"],
    ]);
    const answered = answers[0];
    assert.match(String(answered?.by), /^cli:operator-test/);
    const run = records.find((r) => r.kind === "attempt" && r.verdict === "allow");
    assert.equal(run?.approval_id, id);
  } finally {
    await h.close();
  }
});

Deno.test("out of band: a changed argv gets its own approval; only the approved job runs, once, and a replay asks anew", async () => {
  let asked = 0;
  // require = "operator": a client with elicitation is not asked.
  const h = await startHarness(options('wait_ms = 300\nrequire = "operator"', {
    elicit: () => {
      asked++;
      return { action: "accept" };
    },
  }));
  try {
    assert.match((await h.describePolicy()).sandbox, /kernel sandbox \(bubblewrap\)/);
    const pending = await h.call("run_command", { command: "touch canary.txt" });
    assert.equal(pending.code, "APPROVAL_PENDING");
    assert.equal(pending.ok, false);
    const id = idIn(pending.policy_reason);
    assert.equal(pending.approval_id, id);
    assert.match(pending.policy_reason, new RegExp(`htmcp approvals allow ${id}`));
    assert.equal(asked, 0);

    // A changed argv is another command: a new approval and job, not this one.
    const changed = await h.call("run_command", { command: "touch canary.txt extra.txt" });
    assert.equal(changed.code, "APPROVAL_PENDING");
    assert.notEqual(changed.approval_id, id);
    assert.notEqual(changed.job_id, pending.job_id);

    assert.equal((await approvals(h, "allow", id)).code, 0);
    const done = await h.call("job_status", {
      job_id: pending.job_id,
      wait_ms: 20_000,
    }) as unknown as {
      job: { state: string; code: string };
    };
    assert.deepEqual([done.job.state, done.job.code], ["ended", "OK"]);
    assert.ok(await exists(`${h.jail}/canary.txt`));
    assert.equal(await exists(`${h.jail}/extra.txt`), false, "the changed command did not run");

    // The approval was used: an identical call is a new request.
    await Deno.remove(`${h.jail}/canary.txt`);
    const replay = await h.call("run_command", { command: "touch canary.txt" });
    assert.equal(replay.code, "APPROVAL_PENDING");
    assert.notEqual(replay.approval_id, id);
    assert.equal(await exists(`${h.jail}/canary.txt`), false, "a replay does not run");

    const unknown = await approvals(h, "allow", "0".repeat(32));
    assert.equal(unknown.code, 1);
    assert.match(unknown.stderr, /there is no such approval/);

    const records = await h.records();
    const runs = records.filter((r) => r.kind === "attempt" && r.verdict === "allow");
    assert.deepEqual(runs.map((r) => r.approval_id), [id]);
  } finally {
    await h.close();
  }
});

Deno.test("an approval that outlives approval.ttl_s gives APPROVAL_EXPIRED and can no longer be allowed", async () => {
  const h = await startHarness(options("ttl_s = 1\nwait_ms = 5000"));
  try {
    const result = await h.call("run_command", { command: "touch canary.txt" });
    assert.equal(result.code, "APPROVAL_EXPIRED");
    const id = idIn(result.policy_reason);
    assert.equal(await exists(`${h.jail}/canary.txt`), false);
    const late = await approvals(h, "allow", id);
    assert.equal(late.code, 1);
    assert.match(late.stderr, /it is expired, not pending/);
    const records = await h.records();
    assert.ok(records.some((r) => r.event === "approval_expired" && r.approval_id === id));
    const attempt = records.find((r) => r.kind === "attempt");
    assert.deepEqual([attempt?.code, attempt?.approval_id], ["APPROVAL_EXPIRED", id]);
  } finally {
    await h.close();
  }
});
