/**
 * `audit_tail` over stdio, through the real SDK client and the real server:
 * absent unless the operator exposed it; two servers on one log each see
 * only their own records; bounded in count and size; redacted as written;
 * the asking call itself left out.
 */
import assert from "node:assert/strict";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { LAUNCH, serverEnv, startHarness } from "../_helpers/stdio_harness.ts";
import { MAX_TAIL_BYTES } from "../../src/tools/audit_tail.ts";

const EXPOSED = "[audit]\nexpose_to_model = true\n";
const FAKE_TOKEN = "ghp_abcdefghijklmnopqrstuvwxyz0123456789";

interface Tail {
  ok: boolean;
  code: string;
  scope: string;
  records: Record<string, unknown>[];
  size_limited: boolean;
}

async function tail(client: Client, args: Record<string, unknown> = {}): Promise<Tail> {
  const result = await client.callTool({ name: "audit_tail", arguments: args });
  return result.structuredContent as unknown as Tail;
}

/** A second client on the same policy (so the same log): another stdio server process. */
async function secondServer(policyPath: string, home: string): Promise<Client> {
  const transport = new StdioClientTransport({
    command: Deno.execPath(),
    args: ["run", "--quiet", "--allow-all", LAUNCH, "serve", "--policy", policyPath],
    env: serverEnv(home),
    stderr: "pipe",
  });
  const client = new Client({ name: "htmcp-second", version: "1.0.0" });
  await client.connect(transport);
  return client;
}

Deno.test("audit_tail is not listed and cannot be called unless [audit] expose_to_model = true", async () => {
  const h = await startHarness();
  try {
    const { tools } = await h.client.listTools();
    assert.ok(!tools.some((tool: { name: string }) => tool.name === "audit_tail"));
    const called = await h.client.callTool({ name: "audit_tail", arguments: {} }).then(
      (result) => result,
      (error: unknown) => ({ isError: true, error }),
    );
    assert.equal(called.isError, true);
    const records = await h.records();
    assert.ok(!records.some((record) => record.event === "audit_read"), "nothing was read");
  } finally {
    await h.close();
  }
});

Deno.test("audit_tail over stdio: own records only, redacted, the asking call left out, bounded", async () => {
  const h = await startHarness({ extraToml: EXPOSED });
  let other: Client | null = null;
  try {
    const { tools } = await h.client.listTools();
    const listed = tools.find((tool: { name: string }) => tool.name === "audit_tail");
    assert.ok(listed);
    assert.equal(listed.annotations?.readOnlyHint, true);

    other = await secondServer(h.policyPath, h.dir);
    const theirs = await other.callTool({
      name: "run_command",
      arguments: { command: "echo other-server-command" },
    });
    assert.equal((theirs.structuredContent as { code: string }).code, "OK");
    const printed = await h.call("run_command", { command: `echo ${FAKE_TOKEN} own-marker` });
    assert.equal(printed.code, "OK");
    const refused = await h.call("run_command", { command: "rm -rf /" });
    assert.equal(refused.code, "POLICY_DENIED");

    const first = await tail(h.client, { limit: 50 });
    assert.equal(first.ok, true);
    assert.equal(first.scope, "own");
    const text = JSON.stringify(first.records);
    assert.ok(!text.includes("other-server-command"), "never another caller's records");
    assert.ok(!text.includes(FAKE_TOKEN), "the secret is redacted as written");
    assert.match(text, /\[REDACTED:[^\]]+\] own-marker/);
    // Output never was in the log: the echoed words are only in the command.
    assert.ok(!first.records.some((record) => "stdout" in record));
    const writers = new Set(first.records.map((record) => record.writer));
    assert.equal(writers.size, 1);
    const kinds = first.records.map((record) => `${record.kind}:${record.code ?? ""}`);
    assert.deepEqual(kinds, ["attempt:", "outcome:OK", "attempt:POLICY_DENIED"]);
    assert.ok(!first.records.some((record) => record.event === "audit_read"), "not its own call");
    // As written: each record is the log's own line.
    const lines = (await Deno.readTextFile(h.auditLog)).split("\n").filter((line) => line !== "");
    for (const record of first.records) {
      assert.ok(lines.includes(JSON.stringify(record)), `seq ${record.seq} as written`);
    }

    const second = await tail(h.client, { limit: 2 });
    assert.equal(second.records.length, 2);
    // The newest two before this call: the previous audit_tail call, after the refusal.
    assert.equal(second.records[0]!.code, "POLICY_DENIED");
    assert.equal(second.records[1]!.event, "audit_read");

    const tooMany = await h.client.callTool({ name: "audit_tail", arguments: { limit: 51 } }).then(
      (result) => result,
      (error: unknown) => ({ isError: true, error }),
    );
    assert.equal(tooMany.isError, true, "limit above 50 is refused");

    // Records of about 3 KiB each: 50 of them would exceed the size bound.
    for (let i = 0; i < 12; i++) {
      await h.call("run_command", {
        command: `echo ${String(i).padStart(2, "0")}${"x".repeat(1500)}`,
      });
    }
    const big = await tail(h.client, { limit: 50 });
    assert.equal(big.size_limited, true);
    const bytes = big.records.reduce((sum, record) => sum + JSON.stringify(record).length, 0);
    assert.ok(bytes <= MAX_TAIL_BYTES, `${bytes} bytes`);
    assert.ok(big.records.length < 30, `${big.records.length} records`);
    // Newest kept: the last call's outcome ends the answer.
    assert.equal(big.records.at(-1)!.kind, "outcome");
  } finally {
    await other?.close();
    await h.close();
  }
});
