/**
 * One test per result code through the real MCP SDK client over real stdio.
 * Every refusal asserts the exact code, that a canary was not created, and
 * that the audit log holds the attempt.
 */
import assert from "node:assert/strict";
import { exists, startHarness } from "../_helpers/stdio_harness.ts";

type AuditRecord = Record<string, unknown>;

function attemptsFor(records: AuditRecord[], code: string): AuditRecord[] {
  return records.filter((r) => r.kind === "attempt" && r.code === code);
}

Deno.test("run_command returns OK with the command's output and audits attempt then outcome", async () => {
  const h = await startHarness();
  try {
    const result = await h.call("run_command", { command: "echo hello world" });
    assert.equal(result.code, "OK");
    assert.equal(result.ok, true);
    assert.equal(result.stdout, "hello world\n");
    assert.equal(result.stderr, "");
    assert.equal(result.exit_code, 0);
    assert.equal(typeof result.duration_ms, "number");
    const records = await h.records();
    const attempt = records.find((r) => r.kind === "attempt" && r.verdict === "allow");
    const outcome = records.find((r) => r.kind === "outcome");
    assert.ok(attempt && outcome);
    assert.equal(attempt.call_id, outcome.call_id);
    assert.ok((attempt.seq as number) < (outcome.seq as number), "attempt is written first");
    assert.equal(outcome.code, "OK");
  } finally {
    await h.close();
  }
});

Deno.test("a non-zero exit is OK with its exit_code, not an error code", async () => {
  const h = await startHarness({ allow: ["ls"] });
  try {
    const result = await h.call("run_command", { command: "ls no-such-file" });
    assert.equal(result.code, "OK");
    assert.equal(result.exit_code, 2);
    assert.match(result.stderr, /no-such-file/);
  } finally {
    await h.close();
  }
});

Deno.test("rm -rf / is POLICY_DENIED, nothing is removed, the attempt is audited", async () => {
  const h = await startHarness({ files: { precious: "keep me" } });
  try {
    const result = await h.call("run_command", { command: "rm -rf /" });
    assert.equal(result.code, "POLICY_DENIED");
    assert.equal(result.ok, false);
    assert.equal(result.exit_code, null);
    assert.match(result.policy_reason, /rm/);
    assert.ok(await exists(`${h.jail}/precious`));
    const denied = attemptsFor(await h.records(), "POLICY_DENIED");
    assert.equal(denied.length, 1);
    assert.equal(denied[0]?.verdict, "deny");
    assert.equal(denied[0]?.command_raw, "rm -rf /");
  } finally {
    await h.close();
  }
});

Deno.test("shell syntax htmcp does not model is POLICY_DENIED before anything runs: the canary is not created", async () => {
  const h = await startHarness();
  try {
    for (const command of ["true & touch canary", "(touch canary)", "echo $(touch canary)"]) {
      const result = await h.call("run_command", { command });
      assert.equal(result.code, "POLICY_DENIED", command);
    }
    assert.equal(await exists(`${h.jail}/canary`), false);
    assert.equal(attemptsFor(await h.records(), "POLICY_DENIED").length, 3);
  } finally {
    await h.close();
  }
});

Deno.test("an unbalanced quote is PARSE_ERROR and audited", async () => {
  const h = await startHarness();
  try {
    const result = await h.call("run_command", { command: "touch 'canary" });
    assert.equal(result.code, "PARSE_ERROR");
    assert.equal(await exists(`${h.jail}/canary`), false);
    assert.equal(attemptsFor(await h.records(), "PARSE_ERROR").length, 1);
  } finally {
    await h.close();
  }
});

Deno.test("a command past limits.timeout_ms is TIMEOUT with exit_code null", async () => {
  const h = await startHarness({ extraToml: "[limits]\ntimeout_ms = 400\n" });
  try {
    const result = await h.call("run_command", { command: "sleep 30" });
    assert.equal(result.code, "TIMEOUT");
    assert.equal(result.ok, false);
    assert.equal(result.exit_code, null);
    const outcome = (await h.records()).find((r) => r.kind === "outcome");
    assert.equal(outcome?.code, "TIMEOUT");
  } finally {
    await h.close();
  }
});

Deno.test("output past max_output_bytes is OUTPUT_TRUNCATED with ok true and a marker", async () => {
  const h = await startHarness({
    extraToml: "[limits]\nmax_output_bytes = 1000\n",
    files: { "big.txt": "x".repeat(5000) },
  });
  try {
    const result = await h.call("run_command", { command: "cat big.txt" });
    assert.equal(result.code, "OUTPUT_TRUNCATED");
    assert.equal(result.ok, true);
    assert.ok(result.stdout.startsWith("x".repeat(100)));
    assert.ok(result.stdout.length < 1300, `stdout is ${result.stdout.length} chars`);
    assert.match(result.stdout, /4000 of 5000 bytes dropped/);
    const outcome = (await h.records()).find((r) => r.kind === "outcome");
    assert.equal(outcome?.truncated, true);
    assert.equal(outcome?.stdout_bytes, 5000);
  } finally {
    await h.close();
  }
});

Deno.test("a cwd outside the jail is CWD_ESCAPE and nothing runs", async () => {
  const h = await startHarness();
  try {
    for (const cwd of ["/etc", "..", "../..", "/"]) {
      const result = await h.call("run_command", { command: "touch canary", cwd });
      assert.equal(result.code, "CWD_ESCAPE", cwd);
    }
    assert.equal(await exists(`${h.dir}/canary`), false);
    assert.equal(await exists("/etc/canary"), false);
    assert.equal(attemptsFor(await h.records(), "CWD_ESCAPE").length, 4);
  } finally {
    await h.close();
  }
});

Deno.test("a symlinked cwd that leads out of the jail is CWD_ESCAPE", async () => {
  const h = await startHarness();
  try {
    await Deno.symlink(h.dir, `${h.jail}/out`);
    const result = await h.call("run_command", { command: "touch canary", cwd: "out" });
    assert.equal(result.code, "CWD_ESCAPE");
    assert.equal(await exists(`${h.dir}/canary`), false);
  } finally {
    await h.close();
  }
});

Deno.test("cat /etc/passwd is PATH_ESCAPE and audited", async () => {
  const h = await startHarness();
  try {
    const result = await h.call("run_command", { command: "cat /etc/passwd" });
    assert.equal(result.code, "PATH_ESCAPE");
    assert.equal(result.stdout, "");
    assert.equal(attemptsFor(await h.records(), "PATH_ESCAPE").length, 1);
  } finally {
    await h.close();
  }
});

Deno.test("max_concurrent = 1: an overlapping call waits queue_wait_ms, then is refused BUSY, audited with its wait", async () => {
  const h = await startHarness({
    extraToml: "[limits]\nmax_concurrent = 1\nqueue_wait_ms = 200\n",
  });
  try {
    const slow = h.call("run_command", { command: "sleep 1.5" });
    // Give the first call time to take the only slot.
    await new Promise((resolve) => setTimeout(resolve, 500));
    const second = await h.call("run_command", { command: "touch canary" });
    assert.equal(second.code, "BUSY");
    assert.match(second.policy_reason, /limits\.queue_wait_ms = 200/);
    assert.match(second.policy_reason, /number 1 of 1 in the queue/);
    assert.equal(await exists(`${h.jail}/canary`), false);
    assert.equal((await slow).code, "OK");
    const busy = attemptsFor(await h.records(), "BUSY");
    assert.equal(busy.length, 1);
    assert.equal(busy[0]?.verdict, "deny");
    assert.ok(Number(busy[0]?.queued_ms) >= 190, JSON.stringify(busy[0]));
  } finally {
    await h.close();
  }
});

Deno.test("a client cancellation kills the command and the outcome is CANCELLED", async () => {
  const h = await startHarness();
  try {
    const controller = new AbortController();
    const call = h.call("run_command", { command: "sleep 30" }, controller.signal);
    await new Promise((resolve) => setTimeout(resolve, 500));
    controller.abort();
    await assert.rejects(call);
    let outcome: Record<string, unknown> | undefined;
    for (let i = 0; i < 50 && outcome === undefined; i++) {
      await new Promise((resolve) => setTimeout(resolve, 100));
      outcome = (await h.records()).find((r) => r.kind === "outcome");
    }
    assert.equal(outcome?.code, "CANCELLED");
  } finally {
    await h.close();
  }
});

Deno.test("an audit log that vanished after startup is AUDIT_UNAVAILABLE and nothing runs", async () => {
  const h = await startHarness();
  try {
    await Deno.remove(h.auditLog);
    const result = await h.call("run_command", { command: "touch canary" });
    assert.equal(result.code, "AUDIT_UNAVAILABLE");
    assert.equal(result.ok, false);
    assert.equal(await exists(`${h.jail}/canary`), false);
  } finally {
    await h.close();
  }
});

Deno.test("fail-open audit runs the command and warns on stderr", async () => {
  const h = await startHarness({ topToml: 'audit_fail_mode = "open"' });
  try {
    await Deno.remove(h.auditLog);
    const result = await h.call("run_command", { command: "touch made" });
    assert.equal(result.code, "OK");
    assert.ok(await exists(`${h.jail}/made`));
    assert.match(h.stderr(), /warning/i);
  } finally {
    await h.close();
  }
});
