/**
 * "Always allow this" as an operator command: `htmcp approvals allow ID
 * --always` (the real CLI, another process) writes the rule into the
 * operator's own file; a server started afterwards reads it, audits it, and
 * runs exactly that command unprompted, while any other command is still
 * prompted and a refusal stays a refusal.
 */
import assert from "node:assert/strict";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import type { CommandResult } from "../../src/result/codes.ts";
import {
  exists,
  type Harness,
  LAUNCH,
  serverEnv,
  startHarness,
} from "../_helpers/stdio_harness.ts";
import { approvals, listed, verifyAudit } from "./_approvals.ts";

const POLICY = `
[[rules]]
command = "touch"
decision = "prompt"
args = ["canary.txt"]
justification = "touching the canary stands for a risky command"

[approval]
require = "operator"
wait_ms = 300
ttl_s = 120
always_allow_file = "always_allow.toml"
`;

/** A second server on the harness's policy (the restart), with its own SDK client. */
async function restart(h: Harness): Promise<{ client: Client; close: () => Promise<void> }> {
  const transport = new StdioClientTransport({
    command: Deno.execPath(),
    args: ["run", "--quiet", "--allow-all", LAUNCH, "serve", "--policy", h.policyPath],
    env: serverEnv(h.dir),
    stderr: "pipe",
  });
  const client = new Client({ name: "htmcp-e2e-restart", version: "1.0.0" });
  await client.connect(transport);
  return { client, close: () => client.close() };
}

async function run(client: Client, args: Record<string, unknown>): Promise<CommandResult> {
  const result = await client.callTool({ name: "run_command", arguments: args }, undefined, {
    timeout: 60_000,
  });
  return result.structuredContent as unknown as CommandResult;
}

async function stopped(h: Harness): Promise<void> {
  for (let i = 0; i < 50; i++) {
    const stops = (await h.records()).filter((r) => r.event === "server_stop").length;
    if (stops > 0) return;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

Deno.test("approvals allow --always writes the operator's rule; the next server runs exactly that command unprompted", async () => {
  const h = await startHarness({ topToml: 'state_dir = "state"', extraToml: POLICY });
  const alwaysFile = `${h.dir}/always_allow.toml`;
  try {
    assert.match((await h.describePolicy()).sandbox, /kernel sandbox \(bubblewrap\)/);
    const pending = await h.call("run_command", { command: "touch canary.txt" });
    assert.equal(pending.code, "APPROVAL_PENDING");
    assert.equal(await exists(alwaysFile), false);
    const allowed = await approvals(h, "allow", pending.approval_id!, "--always");
    assert.equal(allowed.code, 0, allowed.stderr);
    assert.match(allowed.stdout, /Always allowed from the server's next start/);
    const info = await Deno.lstat(alwaysFile);
    assert.ok(info.isFile);
    assert.equal((info.mode ?? 0) & 0o777, 0o600, "the rule file is owner-only");
    const text = await Deno.readTextFile(alwaysFile);
    assert.match(text, /\[\[always\]\]/);
    assert.match(text, new RegExp(`id = "${pending.approval_id}"`));
    assert.match(text, /rule = "touch canary\.txt"/);
    // The approval itself ran its job, once.
    const done = await h.call("job_status", {
      job_id: pending.job_id,
      wait_ms: 20_000,
    }) as unknown as {
      job: { code: string };
    };
    assert.equal(done.job.code, "OK");
    assert.ok(await exists(`${h.jail}/canary.txt`));
    await Deno.remove(`${h.jail}/canary.txt`);

    // The running server read the file at startup: its rules are unchanged.
    const stillPrompted = await h.call("run_command", { command: "touch canary.txt" });
    assert.equal(stillPrompted.code, "APPROVAL_PENDING");
    assert.equal((await h.call("job_cancel", { job_id: stillPrompted.job_id })).code, "OK");
    await h.client.close();
    await stopped(h);

    const next = await restart(h);
    try {
      const ran = await run(next.client, { command: "touch canary.txt" });
      assert.equal(ran.code, "OK", ran.policy_reason);
      assert.ok(await exists(`${h.jail}/canary.txt`), "the always-allowed command ran unprompted");
      await Deno.remove(`${h.jail}/canary.txt`);
      // Any other command is prompted as before; a refusal stays a refusal.
      const other = await run(next.client, { command: "touch canary.txt other.txt" });
      assert.equal(other.code, "APPROVAL_PENDING");
      assert.equal(await exists(`${h.jail}/other.txt`), false);
      const inSub = await run(next.client, { command: "touch canary.txt", cwd: "sub" });
      assert.notEqual(inSub.code, "OK");
      const escape = await run(next.client, { command: "touch canary.txt ../canary.txt" });
      assert.equal(escape.code, "PATH_ESCAPE");
      assert.equal(await exists(`${h.dir}/canary.txt`), false);
    } finally {
      await next.close();
    }
    await new Promise((resolve) => setTimeout(resolve, 500));
    const verified = await verifyAudit(h);
    assert.equal(verified.code, 0, verified.stderr + verified.stdout);
    const records = await h.records();
    const loaded = records.filter((r) => r.event === "always_allow_loaded");
    assert.deepEqual(loaded.map((r) => r.rules), [0, 1], "each start audits what it loaded");
    assert.equal(loaded[0]?.sha256, null);
    assert.match(String(loaded[1]?.sha256), /^[0-9a-f]{64}$/);
    const used = records.filter((r) => r.event === "approval_always");
    assert.equal(used.length, 1);
    assert.equal(used[0]?.always_id, pending.approval_id);
    const runs = records.filter((r) => r.kind === "attempt" && r.verdict === "allow");
    assert.deepEqual(runs.map((r) => r.approval_id), [
      pending.approval_id,
      `always:${pending.approval_id}`,
    ]);
    assert.ok((await listed(h)).length >= 2);
  } finally {
    await h.close();
  }
});

Deno.test("approvals deny --always is a usage error, and --always without always_allow_file writes nothing", async () => {
  const h = await startHarness({
    topToml: 'state_dir = "state"',
    extraToml: POLICY.replace('always_allow_file = "always_allow.toml"', ""),
  });
  try {
    assert.match((await h.describePolicy()).sandbox, /kernel sandbox \(bubblewrap\)/);
    const pending = await h.call("run_command", { command: "touch canary.txt" });
    assert.equal(pending.code, "APPROVAL_PENDING");
    const deny = await approvals(h, "deny", pending.approval_id!, "--always");
    assert.equal(deny.code, 2);
    const allow = await approvals(h, "allow", pending.approval_id!, "--always");
    assert.equal(allow.code, 1);
    assert.match(allow.stderr, /names no \[approval\] always_allow_file/);
    assert.deepEqual((await listed(h)).map((r) => r.state), ["pending"], "nothing was answered");
    assert.equal(await exists(`${h.dir}/always_allow.toml`), false);
    assert.equal(await exists(`${h.jail}/canary.txt`), false);
  } finally {
    await h.close();
  }
});
