/**
 * A prompted command in the 2026-07-28 era: that era has no server-to-client
 * channel, so even a client that declares form elicitation is never sent a
 * question (which would fail and read as a denial); the call takes the
 * out-of-band path and, unanswered, ends `APPROVAL_PENDING` with nothing run.
 */
import assert from "node:assert/strict";
import { Client } from "@modelcontextprotocol/client";
import { StdioClientTransport } from "@modelcontextprotocol/client/stdio";
import { prepareJail } from "../_helpers/jail.ts";
import { LAUNCH, policyToml, serverEnv } from "../_helpers/stdio_harness.ts";

Deno.test("stdio 2026-07-28: a prompted command is held for the operator, never asked of the client, and nothing runs", async () => {
  const dir = await Deno.realPath(await Deno.makeTempDir({ prefix: "htmcp-e2e-modern-approval-" }));
  try {
    const jail = `${dir}/jail`;
    await Deno.mkdir(jail);
    await prepareJail(jail);
    const policyPath = `${dir}/policy.toml`;
    await Deno.writeTextFile(
      policyPath,
      policyToml(jail, `${dir}/audit.jsonl`, {
        allow: ["touch"],
        topToml: `state_dir = ${JSON.stringify(`${dir}/state`)}`,
        extraToml: [
          "[[rules]]",
          'command = "touch"',
          'decision = "prompt"',
          'args = ["held"]',
          'justification = "A test of the hold."',
          "[approval]",
          "wait_ms = 500",
          "",
        ].join("\n"),
      }),
    );
    let asked = 0;
    const client = new Client(
      { name: "modern-approvals", version: "0" },
      {
        capabilities: { elicitation: { form: {} } },
        versionNegotiation: { mode: { pin: "2026-07-28" } },
      },
    );
    client.setRequestHandler("elicitation/create", () => {
      asked++;
      return { action: "accept", content: {} };
    });
    await client.connect(
      new StdioClientTransport({
        command: Deno.execPath(),
        args: ["run", "--quiet", "--allow-all", LAUNCH, "serve", "--policy", policyPath],
        env: serverEnv(dir),
      }),
    );
    try {
      const result = await client.callTool({
        name: "run_command",
        arguments: { command: "touch held" },
      });
      const structured = result.structuredContent as { code: string; policy_reason: string };
      assert.equal(structured.code, "APPROVAL_PENDING", JSON.stringify(structured));
      assert.equal(asked, 0, "the 2026 era never sends the client a question");
      assert.equal(await Deno.lstat(`${jail}/held`).then(() => true, () => false), false);
    } finally {
      await client.close();
    }
    const records = (await Deno.readTextFile(`${dir}/audit.jsonl`)).split("\n").filter((l) => l)
      .map((l) => JSON.parse(l));
    const requested = records.find((r) => r.event === "approval_requested");
    assert.equal(requested?.via, "operator", JSON.stringify(requested));
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});
