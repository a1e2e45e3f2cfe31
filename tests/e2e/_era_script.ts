/**
 * One script of calls for the era-equivalence tests: every tool the server
 * lists and each refusal a model can reach with one call, returned as
 * `step -> code` so two eras (or transports) can be compared whole.
 */
import assert from "node:assert/strict";
import type { Client } from "@modelcontextprotocol/client";

type Structured = Record<string, unknown> & { code?: string; job_id?: string };

async function call(client: Client, name: string, args: Record<string, unknown> = {}) {
  const result = await client.callTool({ name, arguments: args });
  return (result.structuredContent ?? {}) as Structured;
}

/**
 * Runs the script through `client`. The server must allow echo, sleep, cat
 * and ls, cap output at 64 bytes, keep jobs (a state store), and expose
 * audit_tail; `canary` is a file outside the jail that must stay untouched.
 */
export async function eraScript(client: Client, canary: string): Promise<Record<string, string>> {
  const listed = (await client.listTools()).tools.map((tool) => tool.name).sort();
  const codes: Record<string, string> = { tools: listed.join(",") };
  const run = async (step: string, args: Record<string, unknown>) => {
    codes[step] = String((await call(client, "run_command", args)).code);
  };
  await run("ok", { command: "echo hi" });
  await run("denied", { command: `rm ${canary}` });
  await run("parse", { command: "echo 'unbalanced" });
  await run("cwd_escape", { command: "ls", cwd: "../" });
  await run("path_escape", { command: `cat ${canary}` });
  await run("timeout", { command: "sleep 5", timeout_ms: 300 });
  await run("truncated", { command: `echo ${"x".repeat(200)}` });
  codes.explain = String((await call(client, "explain_command", { command: "echo" })).code);
  const policy = await call(client, "describe_policy");
  codes.describe = typeof policy.policy_hash === "string" ? "ok" : "missing policy_hash";
  const session = await call(client, "session_start");
  codes.session_start = session.ok === true ? "ok" : JSON.stringify(session);
  const ended = await call(client, "session_end", { session_id: session.session_id });
  codes.session_end = ended.ok === true ? "ok" : JSON.stringify(ended);
  const job = await call(client, "run_command", { command: "sleep 20", background: true });
  codes.background = String(job.code);
  codes.job_status = String((await call(client, "job_status", { job_id: job.job_id })).code);
  codes.job_list = String((await call(client, "job_list")).code);
  codes.job_output = String(
    (await call(client, "job_output", { job_id: job.job_id, stream: "stdout" })).code,
  );
  codes.job_cancel = String((await call(client, "job_cancel", { job_id: job.job_id })).code);
  codes.job_unknown = String(
    (await call(client, "job_status", { job_id: "job_AAAAAAAAAAAAAAAAAAAAAA" })).code,
  );
  const tail = await client.callTool({ name: "audit_tail", arguments: { limit: 5 } });
  codes.audit_tail = tail.isError === true ? "error" : "ok";
  assert.equal(await Deno.readTextFile(canary), "untouched", "nothing refused ran");
  return codes;
}

/** What the script must give in any era (the eras must also agree on the rest). */
export function assertScriptCodes(codes: Record<string, string>): void {
  const pick = (keys: string[]) => Object.fromEntries(keys.map((key) => [key, codes[key]]));
  assert.deepEqual(
    pick([
      "ok",
      "denied",
      "parse",
      "cwd_escape",
      "path_escape",
      "timeout",
      "truncated",
      "background",
      "job_unknown",
      "explain",
    ]),
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
    assert.equal(codes[step], "ok", `${step}: ${codes[step]}`);
  }
  assert.match(codes.tools!, /audit_tail/);
  assert.match(codes.tools!, /job_cancel/);
}
