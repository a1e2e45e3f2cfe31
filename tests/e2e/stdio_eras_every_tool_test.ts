/**
 * The protocol era changes the wire, never the verdict: the same script of
 * calls (every tool the server lists, and each refusal a model can reach
 * with one call) gives the same result codes through the SDK v2 client in
 * the 2025 handshake era and in the stateless 2026-07-28 era, over stdio,
 * with nothing of a refused command run (a canary outside the jail).
 */
import assert from "node:assert/strict";
import type { Client } from "@modelcontextprotocol/client";
import { type Era, startV2Stdio } from "./_v2_clients.ts";

type Structured = Record<string, unknown> & { code?: string; job_id?: string };

async function call(client: Client, name: string, args: Record<string, unknown> = {}) {
  const result = await client.callTool({ name, arguments: args });
  return (result.structuredContent ?? {}) as Structured;
}

/** Runs the script and returns `step -> code` (or `ok`/`error` for tools without codes). */
async function script(era: Era): Promise<Record<string, string>> {
  const harness = await startV2Stdio(era, {
    allow: ["echo", "sleep", "cat", "ls"],
    extraToml: [
      "[limits]",
      "max_output_bytes = 64",
      "[audit]",
      "expose_to_model = true",
      "",
    ].join("\n"),
  });
  const canary = `${harness.dir}/outside-canary`;
  await Deno.writeTextFile(canary, "untouched");
  try {
    const listed = (await harness.client.listTools()).tools.map((tool) => tool.name).sort();
    const codes: Record<string, string> = { tools: listed.join(",") };
    const run = async (step: string, args: Record<string, unknown>) => {
      codes[step] = String((await call(harness.client, "run_command", args)).code);
    };
    await run("ok", { command: "echo hi" });
    await run("denied", { command: `rm ${canary}` });
    await run("parse", { command: "echo 'unbalanced" });
    await run("cwd_escape", { command: "ls", cwd: "../" });
    await run("path_escape", { command: `cat ${canary}` });
    await run("timeout", { command: "sleep 5", timeout_ms: 300 });
    await run("truncated", { command: `echo ${"x".repeat(200)}` });
    codes.explain = String(
      (await call(harness.client, "explain_command", { command: "echo" })).code,
    );
    const policy = await call(harness.client, "describe_policy");
    codes.describe = typeof policy.policy_hash === "string" ? "ok" : "missing policy_hash";
    const session = await call(harness.client, "session_start");
    codes.session_start = session.ok === true ? "ok" : JSON.stringify(session);
    const ended = await call(harness.client, "session_end", { session_id: session.session_id });
    codes.session_end = ended.ok === true ? "ok" : JSON.stringify(ended);
    const job = await call(harness.client, "run_command", {
      command: "sleep 20",
      background: true,
    });
    codes.background = String(job.code);
    codes.job_status = String(
      (await call(harness.client, "job_status", { job_id: job.job_id })).code,
    );
    codes.job_list = String((await call(harness.client, "job_list")).code);
    codes.job_output = String(
      (await call(harness.client, "job_output", { job_id: job.job_id, stream: "stdout" })).code,
    );
    codes.job_cancel = String(
      (await call(harness.client, "job_cancel", { job_id: job.job_id })).code,
    );
    codes.job_unknown = String(
      (await call(harness.client, "job_status", { job_id: "job_AAAAAAAAAAAAAAAAAAAAAA" })).code,
    );
    const tail = await harness.client.callTool({ name: "audit_tail", arguments: { limit: 5 } });
    codes.audit_tail = tail.isError === true ? "error" : "ok";
    assert.equal(await Deno.readTextFile(canary), "untouched", `${era}: nothing refused ran`);
    return codes;
  } finally {
    await harness.close();
  }
}

Deno.test("stdio, both eras: every tool and every one-call refusal give the same codes through the v2 client", async () => {
  const legacy = await script("2025");
  const modern = await script("2026-07-28");
  assert.deepEqual(modern, legacy);
  assert.deepEqual(
    {
      ok: legacy.ok,
      denied: legacy.denied,
      parse: legacy.parse,
      cwd_escape: legacy.cwd_escape,
      path_escape: legacy.path_escape,
      timeout: legacy.timeout,
      truncated: legacy.truncated,
      background: legacy.background,
      job_unknown: legacy.job_unknown,
      explain: legacy.explain,
    },
    {
      ok: "OK",
      denied: "POLICY_DENIED",
      parse: "PARSE_ERROR",
      cwd_escape: "CWD_ESCAPE",
      path_escape: "PATH_ESCAPE",
      timeout: "TIMEOUT",
      truncated: "OUTPUT_TRUNCATED",
      background: "JOB_RUNNING",
      job_unknown: "JOB_NOT_FOUND",
      explain: "OK",
    },
  );
  for (const step of ["describe", "session_start", "session_end", "audit_tail"]) {
    assert.equal(legacy[step], "ok", `${step}: ${legacy[step]}`);
  }
  assert.match(legacy.tools!, /audit_tail/);
  assert.match(legacy.tools!, /job_cancel/);
});
