/**
 * Jobs over HTTP with the real SDK client and OAuth: two servers on one
 * state dir (as replicas behind one origin) agree on a job, which the same
 * client lists, pages and cancels through the server that did not start it;
 * another client sees nothing of it; a read-only token may look but not
 * cancel; progress notifications reach the client over the SSE stream,
 * redacted.
 *
 * Short clocks: `progress_interval_ms = 200` and `foreground_ms = 1000`
 * stand for the 5 s and 45 s defaults.
 */
import { deepEqual, equal, match, ok } from "node:assert/strict";
import { join } from "node:path";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import type { Progress } from "@modelcontextprotocol/sdk/types.js";
import { verifyAuditChain } from "../../src/audit/mod.ts";
import { harnessPolicy, inKernelSandbox, PIN, serveSandboxed } from "../transport/http/_harness.ts";
import { connectWithOAuth } from "../transport/http/_oauth.ts";
import { prepareJail } from "../_helpers/jail.ts";
import { assertAllReaped, uniqueSleep, waitForMarker } from "../exec/_fixtures.ts";

const SECRET = "ghp_abcdefghijklmnopqrstuvwxyz0123456789";

async function start(dir: string, baseUrl: string | null) {
  const policy = inKernelSandbox(harnessPolicy(dir, {
    allow: ["sh", "sleep", "echo", "seq"],
    limits: { progressIntervalMs: 200, foregroundMs: 1_000, timeoutMs: 20_000 },
  }));
  const served = await serveSandboxed(policy, baseUrl);
  return { policy, context: served.context, server: served.server, close: served.close };
}

type Reply = Record<string, unknown> & { job?: Record<string, unknown> };

async function tool(client: Client, name: string, args: Record<string, unknown>) {
  const result = await client.callTool({ name, arguments: args }, undefined, { timeout: 30_000 });
  return result.structuredContent as Reply;
}

async function withTwo(
  fn: (
    first: Awaited<ReturnType<typeof start>>,
    second: Awaited<ReturnType<typeof start>>,
  ) => Promise<void>,
) {
  const dir = await Deno.makeTempDir({ prefix: "htmcp-http-jobs-" });
  await Deno.mkdir(join(dir, "jail"));
  await prepareJail(join(dir, "jail"));
  const first = await start(dir, null);
  // The second serves the same resource, as a replica behind one origin would.
  const second = await start(dir, first.server.url);
  try {
    await fn(first, second);
  } finally {
    await second.close();
    await first.close();
  }
  try {
    const report = verifyAuditChain(await Deno.readFile(first.policy.auditLog));
    ok(report.ok, JSON.stringify(report));
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
}

async function atSecond(second: { server: { url: string } }, provider: unknown): Promise<Client> {
  const transport = new StreamableHTTPClientTransport(new URL(`${second.server.url}/mcp`), {
    authProvider: provider as never,
  });
  const client = new Client({ name: "replica", version: "0" });
  await client.connect(transport);
  return client;
}

Deno.test("a job started on one server is listed, paged and cancelled by the same client through the other; another client sees nothing", async () => {
  await withTwo(async (first, second) => {
    const owner = await connectWithOAuth(new URL(`${first.server.url}/mcp`), PIN);
    const other = await connectWithOAuth(new URL(`${first.server.url}/mcp`), PIN);
    const replica = await atSecond(second, owner.provider);
    try {
      const m = uniqueSleep();
      const started = await tool(owner.client, "run_command", {
        command: `sh -c 'seq 1 3; sleep ${m} & sleep ${m}'`,
        background: true,
      });
      equal(started.code, "JOB_RUNNING");
      const jobId = started.job_id as string;
      const pids = await waitForMarker(m, 2);

      const listed = await tool(replica, "job_list", {});
      deepEqual((listed.jobs as Reply[]).map((j) => [j.job_id, j.state]), [[jobId, "running"]]);

      // Another client: the same id is "not found" everywhere, and nothing happens to the job.
      deepEqual((await tool(other.client, "job_list", {})).jobs, []);
      for (const name of ["job_status", "job_output", "job_cancel"]) {
        const refused = await other.client.callTool({ name, arguments: { job_id: jobId } });
        equal(refused.isError, true, name);
        equal((refused.structuredContent as Reply).code, "JOB_NOT_FOUND", name);
        equal(JSON.stringify(refused).includes("seq"), false, `${name} reveals nothing`);
      }
      const read = await other.client.readResource({ uri: `htmcp://jobs/${jobId}/stdout` }).then(
        () => "read",
        (error) => String(error),
      );
      match(read, /not found/i);
      equal((await tool(owner.client, "job_status", { job_id: jobId })).job?.state, "running");

      // Cancelled through the server that does not run it: the request goes
      // through the state dir, and the owning server kills the tree.
      const cancelled = await tool(replica, "job_cancel", { job_id: jobId });
      equal(cancelled.job?.state, "ended");
      equal(cancelled.job?.code, "CANCELLED");
      await assertAllReaped(pids);
      const page = await tool(replica, "job_output", { job_id: jobId, offset: 2, limit: 2 });
      deepEqual(page.page, {
        stream: "stdout",
        text: "2\n",
        offset: 2,
        next_offset: 4,
        total_bytes: 6,
      });
      const events = (await Deno.readTextFile(first.policy.auditLog)).split("\n")
        .filter((l) => l !== "").map((l) => JSON.parse(l));
      const cancel = events.find((r) => r.event === "job_cancel_requested");
      equal(cancel?.via, "state_dir");
      equal(cancel?.client_id, owner.provider.clientInformation()?.client_id);
      ok(events.some((r) => r.event === "job_ended" && r.job_id === jobId));
    } finally {
      await replica.close().catch(() => {});
      await other.close().catch(() => {});
      await owner.close().catch(() => {});
    }
  });
});

Deno.test("a read-only token may read its jobs but not start or cancel one", async () => {
  await withTwo(async (first) => {
    const reader = await connectWithOAuth(new URL(`${first.server.url}/mcp`), PIN, "shell:read");
    try {
      deepEqual((await tool(reader.client, "job_list", {})).jobs, []);
      for (const name of ["job_cancel", "run_command"]) {
        const refused = await reader.client.callTool({
          name,
          arguments: name === "run_command"
            ? { command: "echo x", background: true }
            : { job_id: "job_AAAAAAAAAAAAAAAAAAAAAA" },
        }).then(() => "allowed", (error) => String(error));
        // The SDK answers the 403 insufficient_scope by asking for a new
        // authorization, which this headless provider cannot give.
        match(refused, /Unauthorized|403|insufficient_scope/i, name);
      }
      const records = (await Deno.readTextFile(first.policy.auditLog)).split("\n")
        .filter((l) => l !== "").map((l) => JSON.parse(l));
      deepEqual(
        records.filter((r) => r.event === "scope_denied").map((r) => [r.tool, r.scope]),
        [["job_cancel", "shell:execute"], ["run_command", "shell:execute"]],
      );
      equal(records.some((r) => r.event === "job_started"), false);
    } finally {
      await reader.close().catch(() => {});
    }
  });
});

Deno.test("progress notifications reach the client over HTTP, redacted, and the adaptive reply carries a job id", async () => {
  await withTwo(async (first) => {
    const conn = await connectWithOAuth(new URL(`${first.server.url}/mcp`), PIN);
    try {
      const seen: Progress[] = [];
      const result = await conn.client.callTool(
        {
          name: "run_command",
          arguments: { command: `sh -c 'echo token ${SECRET}; echo step-two; sleep 3; echo end'` },
        },
        undefined,
        // The client gives up after 3 s; the reply comes after foreground_ms (1 s).
        { timeout: 3_000, onprogress: (p) => seen.push(p) },
      );
      const reply = result.structuredContent as Reply;
      equal(reply.code, "JOB_RUNNING");
      ok(seen.length >= 2, `got ${seen.length} notifications`);
      for (const note of seen) equal((note.message ?? "").includes(SECRET), false);
      ok(seen.some((n) => (n.message ?? "").includes("step-two")));
      const status = await tool(conn.client, "job_status", {
        job_id: reply.job_id,
        wait_ms: 10_000,
      });
      equal(status.job?.state, "ended");
      equal(status.job?.exit_code, 0);
      equal(JSON.stringify(status).includes(SECRET), false);
      const output = await tool(conn.client, "job_output", { job_id: reply.job_id });
      const text = (output.page as { text: string }).text;
      match(text, /^token \[REDACTED:[^\]]+\]\nstep-two\nend\n$/);
    } finally {
      await conn.close().catch(() => {});
    }
  });
});
