/**
 * run_command's job inputs without MCP around it: refused `background` and
 * `timeout_ms` values (exact code, nothing ran, the attempt audited), a
 * call's own deadline in both directions around `limits.timeout_ms`, and a
 * running job holding its concurrency slot until it ends. Real context,
 * real audit log, real child processes.
 */
import { deepEqual, equal, match, ok } from "node:assert/strict";
import { makePolicy } from "../_helpers/policy.ts";
import { assertSandboxMode, prepareJail } from "../_helpers/jail.ts";
import { createServerContext, type ServerContext } from "../../src/server/mod.ts";
import { runCommandTool } from "../../src/tools/run_command.ts";
import { jobCancelTool, jobListTool, jobStatusTool } from "../../src/tools/job_tools.ts";
import { STDIO_CALLER } from "../../src/tools/caller.ts";
import type { Policy } from "../../src/config/types.ts";
import { TEST_LIMITS } from "../_helpers/policy.ts";
import { exists } from "../_helpers/stdio_harness.ts";

interface Fixture {
  context: ServerContext;
  dir: string;
  jail: string;
  records(): Promise<Record<string, unknown>[]>;
  [Symbol.asyncDispose](): Promise<void>;
}

async function fixture(overrides: Partial<Policy> = {}, withState = true): Promise<Fixture> {
  const dir = await Deno.realPath(await Deno.makeTempDir({ prefix: "htmcp-jobs-tool-" }));
  const jail = `${dir}/jail`;
  await Deno.mkdir(jail);
  await prepareJail(jail);
  const auditLog = `${dir}/audit.jsonl`;
  const policy = makePolicy({
    jailRoot: jail,
    auditLog,
    allow: ["sleep", "touch", "echo"],
    overrides: { ...(withState ? { stateDir: `${dir}/state` } : {}), ...overrides },
  });
  const built = await createServerContext(policy);
  if (!built.ok) throw new Error(built.message);
  // These tests are about the job layer, which sits above the sandbox; they
  // say so rather than pass because the sandbox silently went away.
  await assertSandboxMode(built.context.executor, "none");
  return {
    context: built.context,
    dir,
    jail,
    async records() {
      const text = await Deno.readTextFile(auditLog);
      return text.split("\n").filter(Boolean).map((line) => JSON.parse(line));
    },
    async [Symbol.asyncDispose]() {
      await built.context.close("test done");
      await Deno.remove(dir, { recursive: true });
    },
  };
}

const limits = (changes: Partial<Policy["limits"]>) => ({ limits: { ...TEST_LIMITS, ...changes } });

for (
  const [name, args, reason, withState] of [
    [
      "a timeout_ms above limits.max_timeout_ms",
      { command: "touch canary", timeout_ms: 600_001 },
      /timeout_ms 600001 is above this server's limit of 600000 ms/,
      true,
    ],
    [
      "background: true on a server without a state_dir",
      { command: "touch canary", background: true },
      /Background jobs need a state_dir/,
      false,
    ],
    [
      "a background flag that is not a boolean",
      { command: "touch canary", background: "yes" },
      /background flag must be true or false/,
      true,
    ],
    [
      "a timeout_ms that is not a positive integer",
      { command: "touch canary", timeout_ms: 0.5 },
      /timeout_ms must be a positive integer/,
      true,
    ],
  ] as const
) {
  Deno.test(`runCommandTool() refuses ${name}: POLICY_DENIED, nothing ran, audited`, async () => {
    await using f = await fixture({}, withState);
    const result = await runCommandTool(f.context, STDIO_CALLER, args);
    equal(result.code, "POLICY_DENIED");
    match(result.policy_reason, reason);
    equal(await exists(`${f.jail}/canary`), false, "nothing ran");
    const attempts = (await f.records()).filter((r) => r.kind === "attempt");
    equal(attempts.length, 1);
    equal(attempts[0]?.verdict, "deny");
    equal(attempts[0]?.code, "POLICY_DENIED");
    match(String(attempts[0]?.reason), reason);
    equal((await f.records()).some((r) => r.event === "job_started"), false);
  });
}

Deno.test("runCommandTool() honours a call's own deadline below limits.timeout_ms", async () => {
  await using f = await fixture(limits({ timeoutMs: 20_000 }));
  const result = await runCommandTool(f.context, STDIO_CALLER, {
    command: "sleep 5",
    timeout_ms: 300,
  });
  equal(result.code, "TIMEOUT");
  match(result.policy_reason, /longer than the 300 ms limit/);
  ok(result.duration_ms < 5_000);
});

Deno.test("a background job runs to its own deadline past limits.timeout_ms (the helper's backstop moves with it)", async () => {
  await using f = await fixture(limits({ timeoutMs: 300 }));
  const started = await runCommandTool(f.context, STDIO_CALLER, {
    command: "sleep 1.5",
    background: true,
    timeout_ms: 10_000,
  });
  equal(started.code, "JOB_RUNNING");
  const status = await jobStatusTool(f.context, STDIO_CALLER, {
    job_id: started.job_id,
    wait_ms: 10_000,
  });
  equal(status.job?.state, "ended");
  equal(status.job?.code, "OK");
  equal(status.job?.exit_code, 0);
  equal(status.job?.timeout_ms, 10_000);
});

Deno.test("a running job holds its max_concurrent slot until it ends", async () => {
  await using f = await fixture(limits({ maxConcurrent: 1 }));
  const job = await runCommandTool(f.context, STDIO_CALLER, {
    command: "sleep 30",
    background: true,
  });
  equal(job.code, "JOB_RUNNING");
  const busy = await runCommandTool(f.context, STDIO_CALLER, { command: "touch canary" });
  equal(busy.code, "BUSY");
  equal(await exists(`${f.jail}/canary`), false);
  const cancelled = await jobCancelTool(f.context, STDIO_CALLER, { job_id: job.job_id });
  equal(cancelled.job?.code, "CANCELLED");
  const after = await runCommandTool(f.context, STDIO_CALLER, { command: "touch canary" });
  equal(after.code, "OK");
  equal(await exists(`${f.jail}/canary`), true);
  const events = (await f.records()).filter((r) => r.kind === "event").map((r) => r.event);
  deepEqual(events.filter((e) => String(e).startsWith("job_")), [
    "job_started",
    "job_cancel_requested",
    "job_ended",
  ]);
});

Deno.test("an ended job expires after limits.job_retention_s: gone from job_list, JOB_NOT_FOUND, audited", async () => {
  await using f = await fixture(limits({ jobRetentionMs: 50 }));
  const job = await runCommandTool(f.context, STDIO_CALLER, {
    command: "echo kept",
    background: true,
  });
  const ended = await jobStatusTool(f.context, STDIO_CALLER, {
    job_id: job.job_id,
    wait_ms: 5_000,
  });
  equal(ended.job?.state, "ended");
  await new Promise((resolve) => setTimeout(resolve, 100));
  deepEqual((await jobListTool(f.context, STDIO_CALLER)).jobs, []);
  equal(
    (await jobStatusTool(f.context, STDIO_CALLER, { job_id: job.job_id })).code,
    "JOB_NOT_FOUND",
  );
  const expired = (await f.records()).filter((r) => r.event === "job_expired");
  deepEqual(expired.map((r) => r.job_id), [job.job_id]);
});
