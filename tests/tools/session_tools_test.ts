/**
 * Session tools without MCP around them, with two distinct OAuth callers on
 * one real context (real state dir, audit log, executor): one caller's
 * session id is "not found" for the other, nothing runs, the attempt is
 * audited; a token without shell:execute can neither start nor end one.
 */
import assert from "node:assert/strict";
import { makePolicy } from "../_helpers/policy.ts";
import { prepareJail } from "../_helpers/jail.ts";
import { createServerContext } from "../../src/server/mod.ts";
import { runCommandTool } from "../../src/tools/run_command.ts";
import { sessionEndTool, sessionStartTool } from "../../src/tools/session_tools.ts";
import type { CallerIdentity } from "../../src/tools/caller.ts";

const caller = (clientId: string, scopes: string[]): CallerIdentity => ({
  transport: "http",
  clientId,
  scopes: new Set(scopes) as CallerIdentity["scopes"],
});

Deno.test("another caller's session id is refused as not found; nothing ran; audited", async () => {
  const dir = await Deno.realPath(await Deno.makeTempDir({ prefix: "htmcp-session-tools-" }));
  const jail = `${dir}/jail`;
  await Deno.mkdir(`${jail}/sub`, { recursive: true });
  await prepareJail(jail);
  const policy = makePolicy({
    jailRoot: jail,
    auditLog: `${dir}/audit.jsonl`,
    allow: ["touch", "ls"],
    overrides: { stateDir: `${dir}/state` },
  });
  const built = await createServerContext(policy);
  if (!built.ok) throw new Error(built.message);
  const context = built.context;
  try {
    // Layer 1 alone, on purpose: the session check refuses before anything
    // could reach an executor, so no sandbox takes part in what is proven.
    assert.equal(context.executor.describe().mode, "none");
    const alice = caller("alice", ["shell:read", "shell:execute"]);
    const bob = caller("bob", ["shell:read", "shell:execute"]);
    const started = await sessionStartTool(context, alice);
    assert.equal(started.ok, true, started.reason);
    const id = started.session_id as string;

    const stolen = await runCommandTool(context, bob, { command: "touch canary", session_id: id });
    assert.equal(stolen.code, "POLICY_DENIED");
    assert.match(stolen.policy_reason, /was not found/);
    const unknown = await runCommandTool(context, bob, {
      command: "touch canary",
      session_id: "AAAAAAAAAAAAAAAAAAAAAA",
    });
    assert.equal(unknown.policy_reason, stolen.policy_reason.replace(id, "AAAAAAAAAAAAAAAAAAAAAA"));
    assert.equal((await sessionEndTool(context, bob, { session_id: id })).ok, false);
    await assert.rejects(Deno.lstat(`${jail}/canary`), Deno.errors.NotFound);

    const records = (await Deno.readTextFile(`${dir}/audit.jsonl`)).split("\n").filter(Boolean)
      .map((line) => JSON.parse(line));
    const denied = records.filter((r) => r.kind === "attempt" && r.client_id === "bob");
    assert.equal(denied.length, 2);
    assert.ok(denied.every((r) => r.verdict === "deny" && r.code === "POLICY_DENIED"));

    // Alice's session survived Bob's attempts.
    const own = await runCommandTool(context, alice, { command: "ls", session_id: id });
    assert.equal(own.code, "OK", own.policy_reason);

    const readOnly = caller("carol", ["shell:read"]);
    const refused = await sessionStartTool(context, readOnly);
    assert.equal(refused.ok, false);
    assert.match(refused.reason, /shell:execute/);
    assert.match(
      (await sessionEndTool(context, readOnly, { session_id: id })).reason,
      /shell:execute/,
    );
    assert.equal((await sessionEndTool(context, alice, { session_id: id })).ok, true);
  } finally {
    await context.close("test done");
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("session_start does not probe a command held for approval: no approval request is filed for its --version", async () => {
  const dir = await Deno.realPath(await Deno.makeTempDir({ prefix: "htmcp-session-tools-" }));
  const jail = `${dir}/jail`;
  await Deno.mkdir(jail);
  await prepareJail(jail);
  const policy = makePolicy({
    jailRoot: jail,
    auditLog: `${dir}/audit.jsonl`,
    allow: ["touch", "ls"],
    overrides: {
      stateDir: `${dir}/state`,
      rules: [{
        command: "touch",
        denyArgs: ["--version"],
        reason: "held",
        enforce: "deny",
        decision: "prompt",
        justification: "held",
      }],
    },
  });
  const built = await createServerContext(policy);
  if (!built.ok) throw new Error(built.message);
  const context = built.context;
  try {
    assert.equal(context.executor.describe().mode, "none");
    const started = await sessionStartTool(
      context,
      caller("alice", ["shell:read", "shell:execute"]),
    );
    assert.equal(started.ok, true, started.reason);
    const versions = started.versions as Record<string, string>;
    assert.equal(versions["touch"], "not probed (held for approval)");
    assert.notEqual(versions["ls"], "not probed (held for approval)");
    const records = (await Deno.readTextFile(`${dir}/audit.jsonl`)).split("\n").filter(Boolean)
      .map((line) => JSON.parse(line));
    assert.equal(records.filter((r) => r.event === "approval_requested").length, 0);
  } finally {
    await context.close("test done");
    await Deno.remove(dir, { recursive: true });
  }
});
