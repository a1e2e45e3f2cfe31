/**
 * `deno task demo`: the main job of the README. Creates a throwaway jail with
 * a few files, starts the real htmcp server over stdio with the shipped
 * `policy.toml` (jail and audit log pointed at temp folders through the
 * environment), connects the real MCP SDK client, and prints what a model
 * would get for a handful of calls, allowed and refused.
 *
 * @module
 */
import { fileURLToPath } from "node:url";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { runAuditVerify } from "../src/audit/mod.ts";
import { makeDemoJail } from "./_jail.ts";

const REPO = fileURLToPath(new URL("..", import.meta.url));
const POLICY = `${REPO}policy.toml`;

async function main(): Promise<number> {
  // The shipped policy runs commands in the kernel sandbox as the jail's
  // owner, never root: run as root, the demo hands its jail to nobody.
  const jail = await makeDemoJail();
  const state = await Deno.makeTempDir({ prefix: "htmcp-demo-state-" });
  const auditLog = `${state}/audit.jsonl`;

  // Started exactly as an MCP client configuration would start it: through
  // `deno task htmcp`, which runs the server under the permission set
  // generated from the policy.
  const transport = new StdioClientTransport({
    command: Deno.execPath(),
    args: ["task", "--quiet", "--config", `${REPO}deno.json`, "htmcp", "serve", "--policy", POLICY],
    env: {
      PATH: Deno.env.get("PATH") ?? "/usr/bin:/bin",
      HOME: Deno.env.get("HOME") ?? "/",
      HTMCP_JAIL_ROOT: jail,
      HTMCP_AUDIT_LOG: auditLog,
      HTMCP_STATE_DIR: state,
      ...(Deno.env.get("DENO_DIR") ? { DENO_DIR: Deno.env.get("DENO_DIR") as string } : {}),
    },
    stderr: "inherit",
  });
  const client = new Client({ name: "htmcp-demo", version: "1.0.0" });
  console.log(`htmcp demo: jail ${jail}\n            audit log ${auditLog}\n`);
  await client.connect(transport);
  try {
    const calls: [string, string, Record<string, string>][] = [
      ["explain_command", 'explain_command("ls -la")', { command: "ls -la" }],
      ["run_command", 'run_command("ls -la")', { command: "ls -la" }],
      ["run_command", 'run_command("rm -rf /")', { command: "rm -rf /" }],
      ["run_command", 'run_command("cat /etc/passwd", cwd="/etc")', {
        command: "cat /etc/passwd",
        cwd: "/etc",
      }],
      ["run_command", 'run_command("cat /etc/passwd")', { command: "cat /etc/passwd" }],
      ["run_command", 'run_command("cat credentials")  (fake AWS key)', {
        command: "cat credentials",
      }],
      ["run_command", 'run_command("sleep 600")  (timeout)', { command: "sleep 600" }],
    ];
    for (const [tool, label, args] of calls) {
      const result = await client.callTool({ name: tool, arguments: args }, undefined, {
        timeout: 120_000,
      });
      console.log(`> ${label}`);
      console.log(JSON.stringify(result.structuredContent, null, 2));
      console.log();
    }
  } finally {
    await client.close();
  }
  console.log(`> htmcp audit verify ${auditLog}`);
  const verified = await runAuditVerify(auditLog);
  await Deno.remove(jail, { recursive: true });
  await Deno.remove(state, { recursive: true });
  return verified;
}

Deno.exit(await main());
