/**
 * An approval binds its caller: over HTTP with OAuth, two real SDK clients
 * of one server send the identical prompted command; the operator allows
 * the first client's approval, and only the first client can use it.
 */
import { equal, notEqual, ok } from "node:assert/strict";
import { join } from "node:path";
import type { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { createServerContext } from "../../src/server/context.ts";
import { serveHttp } from "../../src/transport/http/server.ts";
import { ApprovalStore } from "../../src/approvals/mod.ts";
import { LocalStateStore } from "../../src/state/mod.ts";
import { harnessPolicy, PIN } from "../transport/http/_harness.ts";
import { connectWithOAuth } from "../transport/http/_oauth.ts";
import { assertSandboxMode, prepareJail } from "../_helpers/jail.ts";
import { exists } from "../_helpers/exists.ts";

async function run(client: Client, command: string) {
  const result = await client.callTool({ name: "run_command", arguments: { command } }, undefined, {
    timeout: 30_000,
  });
  return result.structuredContent as { code: string; policy_reason: string };
}

function idIn(reason: string): string {
  const match = /approval ([0-9a-f]{32})/.exec(reason);
  ok(match, reason);
  return match[1] as string;
}

Deno.test("another OAuth client cannot use an approval the operator gave to the first", async () => {
  const dir = await Deno.realPath(await Deno.makeTempDir({ prefix: "htmcp-http-approvals-" }));
  const jail = join(dir, "jail");
  await Deno.mkdir(jail);
  await prepareJail(jail);
  const base = harnessPolicy(dir, {});
  const policy = {
    ...base,
    sandbox: { ...base.sandbox, mode: "bwrap" as const, acceptPathCheckOnly: false },
    rules: [{
      command: "touch",
      denyArgs: ["canary.txt"],
      reason: "a risky command",
      enforce: "deny" as const,
      decision: "prompt" as const,
      justification: "a risky command",
    }],
    approval: { ttlMs: 60_000, waitMs: 300, require: "any" as const },
  };
  const built = await createServerContext(policy);
  if (!built.ok) throw new Error(built.message);
  const context = built.context;
  await assertSandboxMode(context.executor, "bwrap");
  const started = await serveHttp(context, {
    listen: "127.0.0.1:0",
    baseUrl: null,
    adminPin: PIN,
    warn: () => {},
  });
  if (!started.ok) throw new Error(started.message);
  const url = new URL(`${started.server.url}/mcp`);
  const first = await connectWithOAuth(url, PIN);
  const second = await connectWithOAuth(url, PIN);
  const operator = new LocalStateStore(policy.stateDir!);
  try {
    const pending = await run(first.client, "touch canary.txt");
    equal(pending.code, "APPROVAL_PENDING");
    const id = idIn(pending.policy_reason);
    const answered = await new ApprovalStore(operator).answer(id, true, "cli:test");
    ok(answered.ok);

    const other = await run(second.client, "touch canary.txt");
    equal(other.code, "APPROVAL_PENDING", "the other client gets its own approval");
    notEqual(idIn(other.policy_reason), id);
    equal(await exists(join(jail, "canary.txt")), false, "nothing ran for the other client");

    const ran = await run(first.client, "touch canary.txt");
    equal(ran.code, "OK", ran.policy_reason);
    ok(await exists(join(jail, "canary.txt")));

    const lines = (await Deno.readTextFile(policy.auditLog)).split("\n").filter((l) => l !== "")
      .map((l) => JSON.parse(l) as Record<string, unknown>);
    const runs = lines.filter((r) => r.kind === "attempt" && r.verdict === "allow");
    equal(runs.length, 1);
    equal(runs[0]?.approval_id, id);
  } finally {
    await operator.close();
    await first.close();
    await second.close();
    await started.server.shutdown();
    await context.close("test finished");
    await Deno.remove(dir, { recursive: true });
  }
});
