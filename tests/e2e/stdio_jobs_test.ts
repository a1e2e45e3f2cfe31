/**
 * Long-running work through the real MCP client over stdio: progress
 * notifications while a command runs (redacted, bounded), a foreground call
 * that outlives `limits.foreground_ms` answered as a job, background jobs
 * waited for, paged and cancelled with no process left alive, client
 * cancellation, and a server that stops with jobs running.
 *
 * The clocks are shortened so nothing waits 90 s: the client's request
 * timeout of 3 s stands for the ~60 s after which Claude Desktop gives up,
 * and `foreground_ms = 1000` for the 45 s default below it.
 */
import { deepEqual, equal, match, ok } from "node:assert/strict";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import type { Progress } from "@modelcontextprotocol/sdk/types.js";
import { type Harness, MAIN, serverEnv, startHarness } from "../_helpers/stdio_harness.ts";
import { assertAllReaped, uniqueSleep, waitForMarker } from "../exec/_fixtures.ts";

const SECRET = "AKIAIOSFODNN7EXAMPLE";
const LIMITS = [
  "[limits]",
  "timeout_ms = 20000",
  "progress_interval_ms = 200",
  "foreground_ms = 1000",
  "inline_output_bytes = 1024",
].join("\n");

async function start(state: string, extraToml = LIMITS): Promise<Harness> {
  const harness = await startHarness({
    allow: ["sh", "sleep", "echo", "seq"],
    topToml: `state_dir = "${state}"`,
    extraToml,
  });
  // Every run below must be in the kernel sandbox, not silently without it.
  match((await harness.describePolicy()).sandbox, /kernel sandbox \(bubblewrap\)/);
  return harness;
}

async function withState(fn: (state: string) => Promise<void>) {
  const dir = await Deno.realPath(await Deno.makeTempDir({ prefix: "htmcp-jobs-" }));
  try {
    await fn(`${dir}/state`);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
}

type Reply = Record<string, unknown> & { job?: Record<string, unknown> };

async function tool(h: Harness | Client, name: string, args: Record<string, unknown>) {
  const client = h instanceof Client ? h : h.client;
  const result = await client.callTool({ name, arguments: args }, undefined, { timeout: 40_000 });
  return result.structuredContent as Reply;
}

/** Polls until every pid is gone (the kill is asynchronous to the reply that asked for it). */
async function waitReaped(pids: readonly number[]): Promise<void> {
  const deadline = Date.now() + 5_000;
  while (true) {
    try {
      await assertAllReaped(pids);
      return;
    } catch (error) {
      if (Date.now() > deadline) throw error;
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  }
}

Deno.test("progress notifications arrive while a command runs, redacted and bounded", async () => {
  await withState(async (state) => {
    const h = await start(state, LIMITS.replace("foreground_ms = 1000", "foreground_ms = 60000"));
    try {
      const seen: Progress[] = [];
      const result = await h.client.callTool(
        {
          name: "run_command",
          arguments: {
            // The secret is among the last lines, so every tail shows its line.
            command: `sh -c 'seq 1 500; echo key=${SECRET}; echo tail-line; sleep 2; echo done'`,
          },
        },
        undefined,
        { timeout: 10_000, onprogress: (p) => seen.push(p) },
      );
      const structured = result.structuredContent as Reply;
      equal(structured.code, "OK");
      ok(seen.length >= 3, `expected several notifications over 2 s at 200 ms, got ${seen.length}`);
      for (let i = 1; i < seen.length; i++) {
        ok((seen[i]?.progress ?? 0) > (seen[i - 1]?.progress ?? 0), "progress only grows");
      }
      for (const note of seen) {
        const message = note.message ?? "";
        equal(message.includes(SECRET), false, "no notification carries the secret");
        ok(new TextEncoder().encode(message).byteLength <= 3 * 1024, "bounded in size");
      }
      ok(seen.some((n) => (n.message ?? "").includes("tail-line")), "the last lines are shown");
      ok(
        seen.some((n) => /key=\[REDACTED:[^\]]+\]\ntail-line/.test(n.message ?? "")),
        "redacted in place",
      );
      equal(JSON.stringify(result).includes(SECRET), false);
    } finally {
      await h.close();
    }
  });
});

Deno.test("a foreground call still running after foreground_ms becomes a job before the client gives up", async () => {
  await withState(async (state) => {
    const h = await start(state);
    try {
      // The model can read both clocks before it calls.
      const limits = (await h.describePolicy()).limits as Record<string, number>;
      equal(limits.foreground_ms, 1_000);
      equal(limits.max_timeout_ms, 600_000);
      const started = performance.now();
      // The client's own timeout is 3 s: a reply that waited for the 4 s command would be lost.
      const result = await h.client.callTool(
        { name: "run_command", arguments: { command: "sh -c 'sleep 4; echo finished'" } },
        undefined,
        { timeout: 3_000 },
      );
      const reply = result.structuredContent as Reply;
      ok(performance.now() - started < 3_000);
      equal(reply.code, "JOB_RUNNING");
      equal(reply.ok, true);
      const jobId = reply.job_id as string;
      match(jobId, /^job_[A-Za-z0-9_-]{22}$/);
      match(reply.policy_reason as string, /still running after 1000 ms/);
      const links = (result.content as { type: string; uri?: string }[]).filter((c) =>
        c.type === "resource_link"
      );
      deepEqual(links.map((l) => l.uri), [
        `htmcp://jobs/${jobId}/stdout`,
        `htmcp://jobs/${jobId}/stderr`,
      ]);
      const status = await tool(h, "job_status", { job_id: jobId, wait_ms: 10_000 });
      equal(status.job?.state, "ended");
      equal(status.job?.code, "OK");
      equal(status.job?.exit_code, 0);
      equal(status.job?.origin, "adaptive");
      const output = await tool(h, "job_output", { job_id: jobId, stream: "stdout" });
      equal((output.page as Record<string, unknown>).text, "finished\n");
      const { resources } = await h.client.listResources();
      ok(resources.some((r: { uri: string }) => r.uri === `htmcp://jobs/${jobId}/stdout`));
      const read = await h.client.readResource({ uri: `htmcp://jobs/${jobId}/stdout` });
      equal((read.contents[0] as { text: string }).text, "finished\n");
      const records = await h.records();
      const attempt = records.findIndex((r) => r.kind === "attempt" && r.verdict === "allow");
      const startedEvent = records.findIndex((r) => r.event === "job_started");
      const ended = records.find((r) => r.event === "job_ended");
      ok(attempt !== -1 && startedEvent > attempt, "the attempt is recorded before the job");
      equal(ended?.job_id, jobId);
      equal(ended?.result_code, "OK");
      ok(records.some((r) => r.kind === "outcome" && r.call_id === ended?.call_id));
    } finally {
      await h.close();
    }
  });
});

Deno.test("a long foreground output is cut in the middle and the whole is paged with job_output", async () => {
  await withState(async (state) => {
    const h = await start(state);
    try {
      const reply = await tool(h, "run_command", { command: "seq 1 2000" });
      equal(reply.code, "OK");
      const stdout = reply.stdout as string;
      ok(stdout.startsWith("1\n2\n"));
      ok(stdout.endsWith("1999\n2000\n"));
      const marker =
        /\[htmcp: (\d+) of (\d+) bytes cut here; read them with job_output\(job_id="(job_[^"]+)", stream="stdout", offset=(\d+), limit=(\d+)\)\]/
          .exec(stdout);
      ok(marker !== null, stdout.slice(400, 700));
      const [, cut, total, jobId, offset, limit] = marker;
      equal(reply.job_id, jobId);
      const full = Array.from({ length: 2000 }, (_, i) => `${i + 1}\n`).join("");
      equal(Number(total), new TextEncoder().encode(full).byteLength);
      let text = "";
      let next: number | null = Number(offset);
      while (next !== null && text.length < Number(cut)) {
        const page = (await tool(h, "job_output", {
          job_id: jobId,
          offset: next,
          limit: Math.min(Number(limit), 4096),
        })).page as { text: string; next_offset: number | null };
        text += page.text;
        next = page.next_offset;
      }
      equal(text.slice(0, Number(cut)), full.slice(Number(offset), Number(offset) + Number(cut)));
    } finally {
      await h.close();
    }
  });
});

Deno.test("job_cancel kills a background job's whole tree, and every step is audited", async () => {
  await withState(async (state) => {
    const h = await start(state);
    try {
      const m = uniqueSleep();
      const reply = await tool(h, "run_command", {
        command: `sh -c 'sleep ${m} & sleep ${m}'`,
        background: true,
      });
      equal(reply.code, "JOB_RUNNING");
      const jobId = reply.job_id as string;
      const pids = await waitForMarker(m, 2);
      const listed = await tool(h, "job_list", {});
      deepEqual((listed.jobs as Record<string, unknown>[]).map((j) => [j.job_id, j.state]), [
        [jobId, "running"],
      ]);
      const cancelled = await tool(h, "job_cancel", { job_id: jobId });
      equal(cancelled.job?.state, "ended");
      equal(cancelled.job?.code, "CANCELLED");
      await assertAllReaped(pids);
      const events = (await h.records()).filter((r) => r.kind === "event").map((r) => r.event);
      for (const name of ["job_started", "job_cancel_requested", "job_ended"]) {
        ok(events.includes(name), name);
      }
      const unknown = await tool(h, "job_status", { job_id: "job_AAAAAAAAAAAAAAAAAAAAAA" });
      equal(unknown.code, "JOB_NOT_FOUND");
    } finally {
      await h.close();
    }
  });
});

Deno.test("a client that cancels its foreground call leaves no process alive", async () => {
  await withState(async (state) => {
    const h = await start(state, LIMITS.replace("foreground_ms = 1000", "foreground_ms = 60000"));
    try {
      const m = uniqueSleep();
      const abort = new AbortController();
      const call = h.client.callTool(
        { name: "run_command", arguments: { command: `sh -c 'sleep ${m} & sleep ${m}'` } },
        undefined,
        { timeout: 20_000, signal: abort.signal },
      ).catch((error) => error);
      const pids = await waitForMarker(m, 2);
      abort.abort();
      await call;
      await waitReaped(pids);
      const listed = await tool(h, "job_list", {});
      deepEqual(listed.jobs, [], "a cancelled foreground call is not a job");
    } finally {
      await h.close();
    }
  });
});

Deno.test("a server stopped with jobs running kills them and records why; a crashed one's jobs show as lost", async () => {
  await withState(async (state) => {
    const first = await start(state);
    const m = uniqueSleep();
    const reply = await tool(first, "run_command", { command: `sleep ${m}`, background: true });
    const jobId = reply.job_id as string;
    const pids = await waitForMarker(m, 1);
    first.kill("SIGTERM");
    await waitReaped(pids);
    let ended: Record<string, unknown> | undefined;
    for (let i = 0; i < 50 && ended === undefined; i++) {
      ended = (await first.records()).find((r) => r.event === "job_ended" && r.job_id === jobId);
      if (ended === undefined) await new Promise((resolve) => setTimeout(resolve, 100));
    }
    await first.close().catch(() => {});
    equal(ended?.result_code, "CANCELLED");
    match(String(ended?.reason), /shutting down/);

    // A crash: the server itself SIGKILLed, so it records nothing.
    const crashed = await startUnlaunched(state);
    const m2 = uniqueSleep();
    const job2 = (await tool(crashed.client, "run_command", {
      command: `sleep ${m2}`,
      background: true,
    })).job_id as string;
    const pids2 = await waitForMarker(m2, 1);
    crashed.kill();
    await waitReaped(pids2);
    await crashed.close();

    const again = await start(state);
    try {
      const deadline = Date.now() + 10_000;
      let states: Record<string, unknown> = {};
      while (Date.now() < deadline) {
        const listed = await tool(again, "job_list", {});
        states = Object.fromEntries(
          (listed.jobs as Record<string, unknown>[]).map((j) => [j.job_id, j.state]),
        );
        if (states[job2] !== "running") break;
        await new Promise((resolve) => setTimeout(resolve, 500));
      }
      equal(states[jobId], "ended");
      equal(states[job2], "lost", "never shown as running once its server is gone");
      ok((await again.records()).some((r) => r.event === "job_lost" && r.job_id === job2));
    } finally {
      await again.close();
    }
  });
});

/**
 * A server started without the launcher (all-access, in a child process of
 * its own, its tools confined by the Worker form), so the test can SIGKILL
 * the server itself: a crash.
 */
async function startUnlaunched(state: string) {
  const h = await start(state);
  const policyPath = h.policyPath;
  const policy = await Deno.readTextFile(policyPath);
  await h.client.close();
  await Deno.writeTextFile(policyPath, policy);
  const transport = new StdioClientTransport({
    command: Deno.execPath(),
    // The Worker form keeps the server in this one process (no re-exec as a
    // child), so SIGKILL reaches the server itself.
    args: [
      "run",
      "--quiet",
      "--allow-all",
      "--unstable-worker-options",
      MAIN,
      "serve",
      "--policy",
      policyPath,
    ],
    env: serverEnv(h.dir),
    stderr: "pipe",
  });
  const client = new Client({ name: "htmcp-crash", version: "0" });
  await client.connect(transport);
  return {
    client,
    kill() {
      const pid = transport.pid;
      if (pid === null) throw new Error("not running");
      Deno.kill(pid, "SIGKILL");
    },
    async close() {
      await client.close().catch(() => {});
      await Deno.remove(h.dir, { recursive: true }).catch(() => {});
    },
  };
}
