/**
 * `run_command` as a task of the 2026-07-28 Tasks extension over stdio: the
 * server started through the launcher (under its generated permission set,
 * commands in the kernel sandbox) and raw JSON-RPC over the SDK v2 client's
 * own stdio transport, since the v2 client has no API for the extension.
 * The shared script (`_modern_task_script.ts`) proves each MUST; the
 * other-caller check needs two callers, which only HTTP with OAuth has
 * (`http_modern_tasks_test.ts`).
 */
import { equal, match } from "node:assert/strict";
import { StdioClientTransport } from "@modelcontextprotocol/client/stdio";
import { LAUNCH, policyToml, serverEnv } from "../_helpers/stdio_harness.ts";
import { prepareJail } from "../_helpers/jail.ts";
import { envelope, modernTaskLifecycle, ok200, type Rec, type Rpc } from "./_modern_task_script.ts";

interface RawStdio {
  readonly rpc: Rpc;
  readonly jail: string;
  readonly retentionMs: number;
  records(): Promise<Rec[]>;
  close(): Promise<void>;
}

/** Starts the server over stdio and speaks raw 2026 JSON-RPC to it. */
async function startRaw(state: boolean): Promise<RawStdio> {
  const dir = await Deno.realPath(await Deno.makeTempDir({ prefix: "htmcp-stdio-tasks26-" }));
  const jail = `${dir}/jail`;
  await Deno.mkdir(jail);
  await prepareJail(jail);
  const auditLog = `${dir}/audit.jsonl`;
  const policyPath = `${dir}/policy.toml`;
  await Deno.writeTextFile(
    policyPath,
    policyToml(jail, auditLog, {
      allow: ["sh", "sleep", "echo"],
      ...(state ? { topToml: `state_dir = ${JSON.stringify(`${dir}/state`)}` } : {}),
      extraToml: "[limits]\ntimeout_ms = 20000\nforeground_ms = 1000",
    }),
  );
  const transport = new StdioClientTransport({
    command: Deno.execPath(),
    args: ["run", "--quiet", "--allow-all", LAUNCH, "serve", "--policy", policyPath],
    env: serverEnv(dir),
    stderr: "pipe",
  });
  const waiting = new Map<string, (reply: Rec) => void>();
  transport.onmessage = (message) => {
    const reply = message as Rec;
    if (typeof reply.id !== "string") return;
    waiting.get(reply.id)?.(reply);
    waiting.delete(reply.id);
  };
  await transport.start();
  const rpc: Rpc = (method, params, negotiate) => {
    const id = crypto.randomUUID();
    const replied = new Promise<Rec>((resolve) => waiting.set(id, resolve));
    void transport.send({
      jsonrpc: "2.0",
      id,
      method,
      params: { ...params, _meta: envelope(negotiate) },
    } as never);
    return replied;
  };
  return {
    rpc,
    jail,
    // The default `limits.job_retention_s` (3600 s): the policy sets none.
    retentionMs: 3_600_000,
    async records() {
      const text = await Deno.readTextFile(auditLog).catch(() => "");
      return text.split("\n").filter((line) => line !== "").map((line) => JSON.parse(line));
    },
    async close() {
      await transport.close();
      await Deno.remove(dir, { recursive: true }).catch(() => {});
    },
  };
}

Deno.test("stdio 2026-07-28 Tasks: run_command answers tasks per SEP-2663, in the kernel sandbox", async () => {
  const h = await startRaw(true);
  try {
    const policy = await ok200(h.rpc, "tools/call", { name: "describe_policy", arguments: {} });
    match(String((policy.structuredContent as Rec).sandbox), /kernel sandbox \(bubblewrap\)/);
    await modernTaskLifecycle(h.rpc, () => h.records(), h.retentionMs, h.jail);
  } finally {
    await h.close();
  }
});

Deno.test("stdio 2026-07-28: a server that keeps no jobs offers no Tasks extension, and a negotiated background call is refused as plainly as before", async () => {
  const h = await startRaw(false);
  try {
    const discovered = await ok200(h.rpc, "server/discover", {}, false);
    equal((discovered.capabilities as Rec).extensions, undefined);
    // No runner is mounted: the task methods do not exist here.
    equal((await h.rpc("tasks/get", { taskId: "job_x" }, true)).error?.code, -32601);
    const refused = await ok200(h.rpc, "tools/call", {
      name: "run_command",
      arguments: { command: "echo x", background: true },
    });
    equal("taskId" in refused, false);
    equal((refused.structuredContent as Rec).code, "POLICY_DENIED");
  } finally {
    await h.close();
  }
});
