/**
 * An approval binds its caller: over HTTP with OAuth, two real SDK clients
 * of one server send the identical prompted command; each call becomes a
 * job awaiting its own approval, the other client can neither see nor
 * cancel the first one's job, and the operator's answer to the first
 * client's approval runs only the first client's job.
 */
import { equal, notEqual, ok } from "node:assert/strict";
import { join } from "node:path";
import type { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { ApprovalStore } from "../../src/approvals/mod.ts";
import { LocalStateStore } from "../../src/state/mod.ts";
import { PIN, serveSandboxed } from "../transport/http/_harness.ts";
import { promptedTouchPolicy } from "./_approvals.ts";
import { connectWithOAuth } from "../transport/http/_oauth.ts";
import { prepareJail } from "../_helpers/jail.ts";
import { exists } from "../_helpers/exists.ts";

async function run(client: Client, command: string) {
  const result = await client.callTool({ name: "run_command", arguments: { command } }, undefined, {
    timeout: 30_000,
  });
  return result.structuredContent as {
    code: string;
    policy_reason: string;
    job_id?: string;
    approval_id?: string;
  };
}

async function jobTool(client: Client, name: string, args: Record<string, unknown>) {
  const result = await client.callTool({ name, arguments: args }, undefined, { timeout: 30_000 });
  return result.structuredContent as {
    code: string;
    job?: { state: string; code: string | null };
    jobs?: { job_id: string }[];
  };
}

Deno.test("another OAuth client cannot use an approval the operator gave to the first", async () => {
  const dir = await Deno.realPath(await Deno.makeTempDir({ prefix: "htmcp-http-approvals-" }));
  const jail = join(dir, "jail");
  await Deno.mkdir(jail);
  await prepareJail(jail);
  const policy = promptedTouchPolicy(dir);
  const served = await serveSandboxed(policy);
  const url = new URL(`${served.server.url}/mcp`);
  const first = await connectWithOAuth(url, PIN);
  const second = await connectWithOAuth(url, PIN);
  const operator = new LocalStateStore(policy.stateDir!);
  try {
    const pending = await run(first.client, "touch canary.txt");
    equal(pending.code, "APPROVAL_PENDING");
    const id = pending.approval_id!;
    const jobId = pending.job_id!;
    ok(jobId.startsWith("job_"));

    // The other client: its own approval and job; the first one's job is not found.
    const other = await run(second.client, "touch canary.txt");
    equal(other.code, "APPROVAL_PENDING", "the other client gets its own approval");
    notEqual(other.approval_id, id);
    notEqual(other.job_id, jobId);
    equal((await jobTool(second.client, "job_status", { job_id: jobId })).code, "JOB_NOT_FOUND");
    equal((await jobTool(second.client, "job_cancel", { job_id: jobId })).code, "JOB_NOT_FOUND");
    const theirs = await jobTool(second.client, "job_list", {});
    equal(theirs.jobs?.some((j) => j.job_id === jobId), false);
    equal(
      (await jobTool(first.client, "job_status", { job_id: jobId })).job?.state,
      "awaiting_approval",
    );

    const answered = await new ApprovalStore(operator).answer(id, true, "cli:test");
    ok(answered.ok);
    const done = await jobTool(first.client, "job_status", { job_id: jobId, wait_ms: 20_000 });
    equal(done.job?.code, "OK");
    ok(await exists(join(jail, "canary.txt")));
    const still = await jobTool(second.client, "job_status", { job_id: other.job_id });
    equal(still.job?.state, "awaiting_approval", "the first client's answer is not the other's");

    const lines = (await Deno.readTextFile(policy.auditLog)).split("\n").filter((l) => l !== "")
      .map((l) => JSON.parse(l) as Record<string, unknown>);
    const runs = lines.filter((r) => r.kind === "attempt" && r.verdict === "allow");
    equal(runs.length, 1);
    equal(runs[0]?.approval_id, id);
  } finally {
    await operator.close();
    await first.close();
    await second.close();
    await served.close();
    await Deno.remove(dir, { recursive: true });
  }
});
