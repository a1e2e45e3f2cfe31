/**
 * The tool surface through the real MCP SDK client over stdio: listing,
 * annotations, schemas, the envelope's two forms, explain_command never
 * executing, and describe_policy never leaking.
 */
import assert from "node:assert/strict";
import type { Tool } from "@modelcontextprotocol/sdk/types.js";
import { exists, startHarness } from "../_helpers/stdio_harness.ts";

const ENVELOPE_KEYS = [
  "code",
  "duration_ms",
  "exit_code",
  "ok",
  "policy_reason",
  "stderr",
  "stdout",
];

Deno.test("tools/list offers the nine tools with the right annotations and output schemas", async () => {
  const h = await startHarness();
  try {
    const { tools } = await h.client.listTools();
    const byName = new Map<string, Tool>(tools.map((t: Tool) => [t.name, t]));
    assert.deepEqual([...byName.keys()].sort(), [
      "describe_policy",
      "explain_command",
      "job_cancel",
      "job_list",
      "job_output",
      "job_status",
      "run_command",
      "session_end",
      "session_start",
    ]);
    const run = byName.get("run_command");
    assert.equal(run?.annotations?.readOnlyHint, false);
    assert.equal(run?.annotations?.openWorldHint, false);
    assert.equal(byName.get("explain_command")?.annotations?.readOnlyHint, true);
    assert.equal(byName.get("describe_policy")?.annotations?.readOnlyHint, true);
    for (const name of ["run_command", "explain_command"]) {
      const schema = byName.get(name)?.outputSchema as { properties: Record<string, unknown> };
      // `stages` is present only for a composed command, `job_id` only with a
      // job, `approval_id` only for a prompted command.
      assert.deepEqual(
        Object.keys(schema.properties).sort(),
        [...ENVELOPE_KEYS, "approval_id", "job_id", "stages"].sort(),
      );
      // `command` or `argv`, exactly one: the server refuses both or neither,
      // so the schema requires neither.
      const input = byName.get(name)?.inputSchema as {
        required?: string[];
        properties: Record<string, unknown>;
      };
      assert.equal(input.required, undefined);
      const keys = name === "run_command"
        ? ["argv", "background", "command", "cwd", "session_id", "stdin", "timeout_ms"]
        : ["argv", "command", "cwd"];
      assert.deepEqual(Object.keys(input.properties).sort(), keys);
    }
  } finally {
    await h.close();
  }
});

Deno.test("the envelope is structuredContent; the text block is a compact rendering with the code, the reason and the output", async () => {
  const h = await startHarness();
  try {
    const raw = await h.client.callTool({ name: "run_command", arguments: { command: "echo hi" } });
    const content = raw.content as { type: string; text: string }[];
    assert.equal(content[0]?.type, "text");
    const structured = raw.structuredContent as { code: string; policy_reason: string };
    assert.match(content[0]?.text ?? "", /^OK \(exit 0, /);
    assert.ok(content[0]?.text.includes(structured.policy_reason));
    assert.match(content[0]?.text ?? "", /--- stdout ---\nhi\n/);
    assert.deepEqual(Object.keys(raw.structuredContent ?? {}).sort(), ENVELOPE_KEYS);
    assert.equal(raw.isError, false);
    const refused = await h.client.callTool({
      name: "run_command",
      arguments: { command: "rm x" },
    });
    assert.equal(refused.isError, true);
    const denied = refused.structuredContent as { code: string; policy_reason: string };
    assert.equal(denied.code, "POLICY_DENIED");
    // Clients that drop structuredContent on isError still see the whole reason.
    const refusedText = (refused.content as { text: string }[])[0]?.text ?? "";
    assert.ok(refusedText.startsWith("POLICY_DENIED"), refusedText);
    assert.ok(refusedText.includes(denied.policy_reason), refusedText);
  } finally {
    await h.close();
  }
});

Deno.test("explain_command never executes: the canary stays absent, and the call is audited", async () => {
  const h = await startHarness();
  try {
    const result = await h.call("explain_command", { command: "touch canary" });
    assert.equal(result.code, "OK");
    assert.equal(result.ok, true);
    assert.equal(result.exit_code, null);
    assert.equal(result.stdout, "");
    assert.match(result.policy_reason, /touch/);
    assert.equal(await exists(`${h.jail}/canary`), false);
    const records = await h.records();
    const explain = records.find((r) => r.kind === "explain");
    assert.equal(explain?.command_raw, "touch canary");
    assert.equal(explain?.verdict, "allow");
    assert.equal(records.some((r) => r.kind === "attempt"), false);
  } finally {
    await h.close();
  }
});

Deno.test("explain_command reports a deny verdict as a successful call (isError false)", async () => {
  const h = await startHarness();
  try {
    const raw = await h.client.callTool({
      name: "explain_command",
      arguments: { command: "rm x" },
    });
    assert.equal(raw.isError, false);
    const verdict = raw.structuredContent as { ok: boolean; code: string };
    assert.equal(verdict.ok, false);
    assert.equal(verdict.code, "POLICY_DENIED");
    // The text block is the compact rendering: the code and the whole reason.
    const content = raw.content as { type: string; text: string }[];
    assert.match(content[0]?.text ?? "", /^POLICY_DENIED /);
    const escape = await h.client.callTool({
      name: "explain_command",
      arguments: { command: "cat ../outside" },
    });
    assert.equal(escape.isError, false);
    assert.equal((escape.structuredContent as { code: string }).code, "PATH_ESCAPE");
  } finally {
    await h.close();
  }
});

Deno.test("explain_command gives the same refusal code run_command would", async () => {
  const h = await startHarness();
  try {
    const cases: [string, string][] = [
      ["rm -rf /", "POLICY_DENIED"],
      ["cat /etc/passwd", "PATH_ESCAPE"],
      ["echo 'open", "PARSE_ERROR"],
      ["ls | rm x", "POLICY_DENIED"],
      ["ls > ../x", "PATH_ESCAPE"],
    ];
    for (const [command, code] of cases) {
      assert.equal((await h.call("explain_command", { command })).code, code, command);
    }
  } finally {
    await h.close();
  }
});

Deno.test("describe_policy lists commands and limits but never the audit path or the jail path", async () => {
  const h = await startHarness({
    extraToml: "[limits]\ntimeout_ms = 1234\nqueue_wait_ms = 4321\n",
  });
  try {
    const raw = await h.client.callTool({ name: "describe_policy", arguments: {} });
    const text = JSON.stringify(raw);
    const description = raw.structuredContent as {
      allowed_commands: string[];
      denied_commands: string[];
      jail_root: string;
      limits: { timeout_ms: number; max_output_bytes: number; queue_wait_ms: number };
    };
    assert.ok(description.allowed_commands.includes("ls"));
    assert.ok(description.denied_commands.includes("rm"));
    assert.equal(description.limits.timeout_ms, 1234);
    assert.equal(description.limits.queue_wait_ms, 4321);
    assert.equal(description.jail_root, "<jail>");
    assert.equal(text.includes(h.auditLog), false, "audit path leaked");
    assert.equal(text.includes(h.jail), false, "jail path leaked");
    assert.equal(text.includes("audit"), false);
  } finally {
    await h.close();
  }
});

Deno.test("describe_policy shows the jail path when the operator opts in", async () => {
  const h = await startHarness({ extraToml: "[describe]\nshow_jail_path = true\n" });
  try {
    const raw = await h.client.callTool({ name: "describe_policy", arguments: {} });
    assert.equal((raw.structuredContent as { jail_root: string }).jail_root, h.jail);
  } finally {
    await h.close();
  }
});

Deno.test("a secret in command output is redacted before it reaches the client", async () => {
  const h = await startHarness({
    files: {
      creds:
        "aws_access_key_id = AKIAIOSFODNN7EXAMPLE\ntoken: ghp_abcdefghijklmnopqrstuvwxyz0123456789\n",
    },
  });
  try {
    const result = await h.call("run_command", { command: "cat creds" });
    assert.equal(result.code, "OK");
    assert.equal(result.stdout.includes("AKIAIOSFODNN7EXAMPLE"), false);
    assert.equal(result.stdout.includes("ghp_abcdefghij"), false);
    assert.match(result.stdout, /\[REDACTED:/);
  } finally {
    await h.close();
  }
});

Deno.test("a secret in the command text is redacted in the audit log", async () => {
  const h = await startHarness();
  try {
    await h.call("run_command", { command: "echo AKIAIOSFODNN7EXAMPLE" });
    const text = await Deno.readTextFile(h.auditLog);
    assert.equal(text.includes("AKIAIOSFODNN7EXAMPLE"), false);
    assert.match(text, /REDACTED/);
  } finally {
    await h.close();
  }
});

Deno.test("closing stdin kills a running command and its outcome is audited", async () => {
  const h = await startHarness({ files: { "s.sh": "echo $$ > pid\nexec sleep 30\n" } });
  try {
    const pending = h.call("run_command", { command: "sh s.sh" })
      .catch(() => null);
    let pid = "";
    for (let i = 0; i < 50 && pid === ""; i++) {
      await new Promise((resolve) => setTimeout(resolve, 100));
      pid = (await Deno.readTextFile(`${h.jail}/pid`).catch(() => "")).trim();
    }
    assert.notEqual(pid, "");
    await h.client.close();
    await pending;
    let outcome: Record<string, unknown> | undefined;
    for (let i = 0; i < 50 && outcome === undefined; i++) {
      await new Promise((resolve) => setTimeout(resolve, 100));
      outcome = (await h.records()).find((r) => r.kind === "outcome");
    }
    assert.ok(outcome, "outcome record written on shutdown");
    assert.notEqual(outcome.code, "OK");
    const stop = (await h.records()).find((r) => r.kind === "event" && r.event === "server_stop");
    assert.ok(stop, "server_stop recorded");
  } finally {
    await h.close();
  }
});

Deno.test("SIGTERM ends a running command, writes its outcome, then server_stop", async () => {
  const h = await startHarness({ files: { "s.sh": "echo started > started\nexec sleep 30\n" } });
  try {
    const pending = h.call("run_command", { command: "sh s.sh" }).catch(() => null);
    for (let i = 0; i < 50; i++) {
      await new Promise((resolve) => setTimeout(resolve, 100));
      if (await exists(`${h.jail}/started`)) break;
    }
    h.kill("SIGTERM");
    await pending;
    let records: Record<string, unknown>[] = [];
    for (let i = 0; i < 50; i++) {
      await new Promise((resolve) => setTimeout(resolve, 100));
      records = await h.records();
      if (records.some((r) => r.event === "server_stop")) break;
    }
    const outcome = records.find((r) => r.kind === "outcome");
    const stop = records.find((r) => r.event === "server_stop");
    assert.ok(outcome, "the killed command's outcome is on record");
    assert.equal(outcome.code, "CANCELLED");
    assert.equal(stop?.reason, "received SIGTERM");
    assert.ok((outcome.seq as number) < (stop?.seq as number), "outcome before server_stop");
  } finally {
    await h.close().catch(() => {});
  }
});
