/**
 * The run_command pipeline without MCP around it: snapshotting, scopes, the
 * order of steps, and the INTERNAL_ERROR boundary. Real context (real audit
 * log, real executor, real child processes) built from a test policy.
 */
import assert from "node:assert/strict";
import { makePolicy } from "../_helpers/policy.ts";
import { prepareJail } from "../_helpers/jail.ts";
import { createServerContext, type ServerContext } from "../../src/server/mod.ts";
import { runCommandTool } from "../../src/tools/run_command.ts";
import { explainCommandTool } from "../../src/tools/explain_command.ts";
import { STDIO_CALLER } from "../../src/tools/caller.ts";
import { INTERNAL_ERROR_REASON } from "../../src/tools/internal_error.ts";
import { PATH_CHECK_ONLY_TAIL } from "../../src/sandbox/mod.ts";
import type { Policy } from "../../src/config/types.ts";

interface Fixture {
  context: ServerContext;
  dir: string;
  jail: string;
  auditLog: string;
  records(): Promise<Record<string, unknown>[]>;
  [Symbol.asyncDispose](): Promise<void>;
}

async function fixture(overrides: Partial<Policy> = {}): Promise<Fixture> {
  const dir = await Deno.realPath(await Deno.makeTempDir({ prefix: "htmcp-tools-" }));
  const jail = `${dir}/jail`;
  await Deno.mkdir(jail);
  await prepareJail(jail);
  const auditLog = `${dir}/audit.jsonl`;
  const policy = makePolicy({ jailRoot: jail, auditLog, overrides });
  const built = await createServerContext(policy);
  if (!built.ok) throw new Error(built.message);
  return {
    context: built.context,
    dir,
    jail,
    auditLog,
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

Deno.test("runCommandTool() reads each argument exactly once (a changing getter cannot swap the command)", async () => {
  await using f = await fixture();
  let reads = 0;
  const hostile = {
    get command() {
      reads++;
      // First read is what gets checked; a second read would return the attack.
      return reads === 1 ? "echo safe" : "touch canary";
    },
  };
  const result = await runCommandTool(f.context, STDIO_CALLER, hostile);
  assert.equal(reads, 1);
  assert.equal(result.code, "OK");
  assert.equal(result.stdout, "safe\n");
  await assert.rejects(Deno.stat(`${f.jail}/canary`));
});

Deno.test("runCommandTool() turns an unexpected throw into INTERNAL_ERROR with a generic reason and audits the detail", async () => {
  await using f = await fixture();
  const hostile = {
    get command(): string {
      throw new Error("secret detail /root/.ssh/id_rsa");
    },
  };
  const result = await runCommandTool(f.context, STDIO_CALLER, hostile);
  assert.equal(result.code, "INTERNAL_ERROR");
  assert.equal(result.ok, false);
  // The fixture runs without the kernel sandbox (its explicit opt-in), so every reply says so.
  assert.equal(result.policy_reason, `${INTERNAL_ERROR_REASON} ${PATH_CHECK_ONLY_TAIL}`);
  assert.equal(JSON.stringify(result).includes("secret detail"), false);
  assert.equal(JSON.stringify(result).includes("at "), false, "no stack trace");
  const event = (await f.records()).find((r) => r.event === "internal_error");
  assert.match(String(event?.message), /secret detail/);
});

Deno.test("runCommandTool() refuses a caller without shell:execute with SCOPE_DENIED and audits it", async () => {
  await using f = await fixture();
  const reader = {
    transport: "http" as const,
    clientId: "c1",
    scopes: new Set(["shell:read" as const]),
  };
  const result = await runCommandTool(f.context, reader, { command: "touch canary" });
  assert.equal(result.code, "SCOPE_DENIED");
  await assert.rejects(Deno.stat(`${f.jail}/canary`));
  const attempt = (await f.records()).find((r) => r.kind === "attempt");
  assert.equal(attempt?.code, "SCOPE_DENIED");
  assert.equal(attempt?.client_id, "c1");
  const explained = await explainCommandTool(f.context, reader, { command: "ls" });
  assert.equal(explained.code, "OK");
});

Deno.test("explainCommandTool() refuses a caller without shell:read", async () => {
  await using f = await fixture();
  const runner = {
    transport: "http" as const,
    clientId: "c2",
    scopes: new Set(["shell:execute" as const]),
  };
  assert.equal(
    (await explainCommandTool(f.context, runner, { command: "ls" })).code,
    "SCOPE_DENIED",
  );
});

Deno.test("runCommandTool() writes the attempt to disk before the command starts", async () => {
  // The command reads the audit log itself: its own attempt must already be there.
  await using f = await fixture({ confineArgs: false });
  // Commands run as the jail's unprivileged owner, never root: let it read the log.
  await Deno.chmod(f.auditLog, 0o644);
  const result = await runCommandTool(f.context, STDIO_CALLER, { command: `cat ${f.auditLog}` });
  assert.equal(result.code, "OK");
  const lines = result.stdout.split("\n").filter(Boolean).map((line) => JSON.parse(line));
  const last = lines.at(-1);
  assert.equal(last.kind, "attempt");
  assert.equal(last.verdict, "allow");
  assert.equal(last.command_raw, `cat ${f.auditLog}`);
});

Deno.test("runCommandTool() rejects non-string and oversized arguments with POLICY_DENIED", async () => {
  await using f = await fixture();
  for (
    const input of [null, 42, { command: 7 }, { command: "ls", cwd: 3 }, {
      command: "x".repeat(20_000),
    }]
  ) {
    const result = await runCommandTool(f.context, STDIO_CALLER, input);
    assert.equal(result.code, "POLICY_DENIED", JSON.stringify(input)?.slice(0, 40));
  }
});

Deno.test("the policy check comes before the jail: a denied command with an escaping path is POLICY_DENIED", async () => {
  await using f = await fixture();
  const result = await runCommandTool(f.context, STDIO_CALLER, {
    command: "rm /etc/passwd",
    cwd: "/etc",
  });
  assert.equal(result.code, "POLICY_DENIED");
});

Deno.test("the cwd jail comes before argument paths: CWD_ESCAPE wins over PATH_ESCAPE", async () => {
  await using f = await fixture();
  const result = await runCommandTool(f.context, STDIO_CALLER, {
    command: "cat /etc/passwd",
    cwd: "/",
  });
  assert.equal(result.code, "CWD_ESCAPE");
});

Deno.test("the audit log hides a --password value given as its own argv word", async () => {
  await using f = await fixture();
  const result = await runCommandTool(f.context, STDIO_CALLER, {
    command: "echo --password hunter2hunter2",
  });
  assert.equal(result.code, "OK");
  const text = await Deno.readTextFile(f.auditLog);
  assert.equal(text.includes("hunter2hunter2"), false, text);
  const attempt = (await f.records()).find((r) => r.kind === "attempt");
  assert.deepEqual(attempt?.argv, ["echo", "--password", "[REDACTED:secret_assignment]"]);
});
