/**
 * Both protocol eras over stdio with the SDK v2 client: a 2026-07-28 client
 * (no `initialize`, `server/discover`, per-request `_meta`) and a 2025 client
 * get the same tools, the same refusals and the same audit trail.
 */
import assert from "node:assert/strict";
import type { CommandResult } from "../../src/result/codes.ts";
import { exists } from "../_helpers/stdio_harness.ts";
import { type Era, startV2Stdio } from "./_v2_clients.ts";

const TOOLS = ["describe_policy", "explain_command", "run_command", "session_end", "session_start"];

for (const era of ["2026-07-28", "2025"] as const satisfies readonly Era[]) {
  Deno.test(`stdio ${era}: the v2 client negotiates its era and lists every tool, titled and fully annotated`, async () => {
    const h = await startV2Stdio(era);
    try {
      assert.equal(
        h.client.getNegotiatedProtocolVersion(),
        era === "2025" ? "2025-11-25" : "2026-07-28",
      );
      const info = h.client.getServerVersion();
      assert.equal(info?.name, "htmcp");
      assert.match(info?.icons?.[0]?.src ?? "", /^data:image\/svg\+xml;base64,/);
      assert.match(h.client.getInstructions() ?? "", /without a shell/);
      const listed = await h.client.listTools();
      const names = listed.tools.map((tool) => tool.name);
      for (const name of TOOLS) assert.ok(names.includes(name), `${name} is listed`);
      if (era === "2026-07-28") {
        // Deterministic order, so a client's cache keyed on the answer holds.
        assert.deepEqual(names, [...names].sort());
      }
      for (const tool of listed.tools) {
        assert.ok(tool.title !== undefined && tool.title !== "", `${tool.name} has a title`);
        for (const hint of ["readOnlyHint", "destructiveHint", "idempotentHint", "openWorldHint"]) {
          assert.equal(
            typeof (tool.annotations as Record<string, unknown> | undefined)?.[hint],
            "boolean",
            `${tool.name} sets ${hint}`,
          );
        }
      }
    } finally {
      await h.close();
    }
  });

  Deno.test(`stdio ${era}: run_command runs an allowed command and refuses a denied one, nothing of it running, both audited`, async () => {
    const h = await startV2Stdio(era);
    try {
      const ran = await h.client.callTool({
        name: "run_command",
        arguments: { command: "echo era-ok" },
      });
      const ok = ran.structuredContent as unknown as CommandResult;
      assert.equal(ok.code, "OK");
      assert.match(ok.stdout, /era-ok/);

      const denied = await h.client.callTool({
        name: "run_command",
        arguments: { command: "rm -rf canary" },
      });
      assert.equal(denied.isError, true);
      assert.match(JSON.stringify(denied.content), /POLICY_DENIED/);

      const shell = await h.client.callTool({
        name: "run_command",
        arguments: { command: "echo $(touch canary)" },
      });
      assert.equal(shell.isError, true);
      assert.equal(await exists(`${h.jail}/canary`), false);

      const records = await h.records();
      const attempts = records.filter((r) => r.kind === "attempt");
      assert.ok(attempts.some((r) => r.command_raw === "echo era-ok" && r.verdict === "allow"));
      assert.ok(attempts.some((r) => r.command_raw === "rm -rf canary" && r.verdict === "deny"));
      assert.ok(attempts.some((r) => r.command_raw === "echo $(touch canary)"));
      // Each attempt names the era it came in.
      for (const attempt of attempts) assert.equal(attempt.protocol_era, era);
    } finally {
      await h.close();
    }
  });
}

Deno.test("stdio 2026-07-28: a cancelled call kills its command and the outcome is CANCELLED", async () => {
  const h = await startV2Stdio("2026-07-28");
  try {
    const controller = new AbortController();
    const call = h.client.callTool(
      { name: "run_command", arguments: { command: "sleep 30" } },
      { signal: controller.signal },
    );
    // Cancel once the command is running (its attempt is on record).
    for (let i = 0; i < 100; i++) {
      if ((await h.records()).some((r) => r.kind === "attempt")) break;
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    await new Promise((resolve) => setTimeout(resolve, 300));
    controller.abort();
    await assert.rejects(call);
    let outcome: Record<string, unknown> | undefined;
    for (let i = 0; i < 50 && outcome === undefined; i++) {
      await new Promise((resolve) => setTimeout(resolve, 100));
      outcome = (await h.records()).find((r) => r.kind === "outcome");
    }
    assert.equal(outcome?.code, "CANCELLED");
  } finally {
    await h.close();
  }
});

Deno.test("stdio 2026-07-28: a request without the _meta protocol version on a 2026 connection is refused, audited, and nothing runs", async () => {
  const { LAUNCH, policyToml, serverEnv } = await import("../_helpers/stdio_harness.ts");
  const { prepareJail } = await import("../_helpers/jail.ts");
  const dir = await Deno.realPath(await Deno.makeTempDir({ prefix: "htmcp-e2e-raw-" }));
  try {
    await Deno.mkdir(`${dir}/jail`);
    await prepareJail(`${dir}/jail`);
    await Deno.writeTextFile(
      `${dir}/policy.toml`,
      policyToml(`${dir}/jail`, `${dir}/audit.jsonl`, { allow: ["touch", "echo"] }),
    );
    const envelope = {
      "io.modelcontextprotocol/protocolVersion": "2026-07-28",
      "io.modelcontextprotocol/clientInfo": { name: "raw", version: "1" },
      "io.modelcontextprotocol/clientCapabilities": {},
    };
    const lines = [
      { jsonrpc: "2.0", id: 1, method: "tools/list", params: { _meta: envelope } },
      {
        jsonrpc: "2.0",
        id: 2,
        method: "tools/call",
        params: { name: "run_command", arguments: { command: "touch canary" } },
      },
    ];
    const child = new Deno.Command(Deno.execPath(), {
      args: ["run", "--quiet", "--allow-all", LAUNCH, "serve", "--policy", `${dir}/policy.toml`],
      env: serverEnv(dir),
      stdin: "piped",
      stdout: "piped",
      stderr: "null",
    }).spawn();
    const writer = child.stdin.getWriter();
    await writer.write(
      new TextEncoder().encode(lines.map((l) => JSON.stringify(l)).join("\n") + "\n"),
    );
    const reader = child.stdout.pipeThrough(new TextDecoderStream()).getReader();
    let text = "";
    while ((text.match(/\n/g) ?? []).length < 2) {
      const { done, value } = await reader.read();
      if (done) break;
      text += value;
    }
    await writer.close();
    await child.status;
    reader.releaseLock();
    const answers = text.trim().split("\n").map((line) => JSON.parse(line));
    const refused = answers.find((a) => a.id === 2);
    assert.equal(typeof refused?.error?.code, "number", text);
    assert.equal(await exists(`${dir}/jail/canary`), false);
    const records = (await Deno.readTextFile(`${dir}/audit.jsonl`)).trim().split("\n").map((l) =>
      JSON.parse(l)
    );
    assert.equal(records.filter((r) => r.kind === "attempt").length, 0);
    const audited = records.find((r) => r.event === "protocol_refused");
    assert.equal(audited?.transport, "stdio");
    assert.equal(audited?.method, "tools/call");
    assert.equal(audited?.jsonrpc_code, refused.error.code);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});
