import assert, { equal } from "node:assert/strict";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { processEnv } from "../../src/cli/env.ts";
import { loadPolicy } from "../../src/config/mod.ts";
import { buildPermissionSet, renderDenoFlags } from "../../src/permissions/mod.ts";
import { planLaunch, renderExecFragment } from "../../scripts/launch.ts";
import { prepareJail } from "../_helpers/jail.ts";

const LAUNCH = new URL("../../scripts/launch.ts", import.meta.url).pathname;

async function withPolicy(fn: (policyFile: string, dir: string) => Promise<void>): Promise<void> {
  const dir = Deno.realPathSync(await Deno.makeTempDir({ prefix: "htmcp-launch-" }));
  try {
    await Deno.mkdir(`${dir}/jail`);
    await prepareJail(`${dir}/jail`);
    await Deno.mkdir(`${dir}/log`);
    await Deno.writeTextFile(`${dir}/jail/notes.txt`, "jailed\n");
    await Deno.writeTextFile(
      `${dir}/policy.toml`,
      `jail_root = "jail"\naudit_log = "log/audit.jsonl"\n[allowlist]\ncommands = ["cat", "sleep"]\n`,
    );
    await fn(`${dir}/policy.toml`, dir);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
}

Deno.test("planLaunch() runs serve under exactly the generated flags, never -A", async () => {
  await withPolicy(async (policyFile, dir) => {
    const plan = await planLaunch(["serve", "--policy", "policy.toml"], dir);
    assert(plan.ok, plan.ok ? "" : plan.message);
    const loaded = await loadPolicy({ policyFile, env: processEnv() });
    assert(loaded.ok);
    const built = await buildPermissionSet(loaded.policy);
    assert(built.ok);
    const flags = renderDenoFlags(built.set);
    assert.deepEqual(plan.argv.slice(0, 1 + flags.length), ["run", ...flags]);
    assert(!plan.argv.includes("-A") && !plan.argv.includes("--allow-all"));
    assert.deepEqual(
      plan.argv.slice(-3),
      ["serve", "--policy", "policy.toml"],
      "arguments pass verbatim",
    );
  });
});

Deno.test("planLaunch() grants write on the always-allow file to approvals allow --always alone", async () => {
  await withPolicy(async (policyFile, dir) => {
    await Deno.mkdir(`${dir}/ops`);
    await Deno.writeTextFile(
      policyFile,
      `jail_root = "jail"\naudit_log = "log/audit.jsonl"\nstate_dir = "state"\n` +
        `[allowlist]\ncommands = ["cat", "sleep"]\n` +
        `[approval]\nalways_allow_file = "ops/always.toml"\n`,
    );
    const file = `${dir}/ops/always.toml`;
    const grant = `--allow-write=${file},${file}.htmcp-tmp`;
    const always = await planLaunch([
      "approvals",
      "allow",
      "ab",
      "--always",
      "--policy",
      policyFile,
    ], dir);
    assert(always.ok, always.ok ? "" : always.message);
    assert(always.argv.includes(grant));
    for (const args of [["approvals", "allow", "ab"], ["approvals", "list"], ["serve"]]) {
      const plan = await planLaunch([...args, "--policy", policyFile], dir);
      assert(plan.ok, plan.ok ? "" : plan.message);
      assert(!plan.argv.some((flag) => flag.includes(file) && flag.startsWith("--allow-write")));
    }
  });
});

Deno.test("planLaunch() gives version/help no permission and audit verify read on its file only", async () => {
  const version = await planLaunch(["version"], "/tmp");
  assert(version.ok);
  assert(!version.argv.some((arg) => arg.startsWith("--allow-")), version.argv.join(" "));
  assert(version.argv.includes("--no-prompt"));
  const audit = await planLaunch(["audit", "verify", "log.jsonl"], "/srv/htmcp");
  assert(audit.ok);
  assert.deepEqual(audit.argv.filter((arg) => arg.startsWith("--allow-")), [
    "--allow-read=/srv/htmcp/log.jsonl",
  ]);
});

Deno.test("planLaunch() reports a bad policy in the loader's one sentence and runs nothing", async () => {
  const plan = await planLaunch(["serve", "--policy", "/nonexistent/policy.toml"], "/tmp");
  assert(!plan.ok);
  assert.match(plan.message, /nonexistent/);
  assert.doesNotMatch(plan.message, /\n/);
});

Deno.test("deno task htmcp serve is a real stdio MCP server under the generated flags", async () => {
  await withPolicy(async (policyFile) => {
    const transport = new StdioClientTransport({
      command: Deno.execPath(),
      args: ["run", "-A", LAUNCH, "serve", "--policy", policyFile],
      env: { NO_COLOR: "1", PATH: "/usr/bin:/bin" },
      stderr: "pipe",
    });
    let stderr = "";
    transport.stderr?.on("data", (chunk: Uint8Array) => stderr += new TextDecoder().decode(chunk));
    const client = new Client({ name: "launch-test", version: "1" });
    await client.connect(transport);
    try {
      const result = await client.callTool({
        name: "run_command",
        arguments: { command: "cat notes.txt" },
      });
      const body = result.structuredContent as Record<string, unknown>;
      equal(body.code, "OK", JSON.stringify(body) + stderr);
      equal(body.stdout, "jailed\n");
    } finally {
      await client.close();
    }
  });
});

Deno.test("the launcher forwards SIGTERM to the server, which shuts down cleanly", async () => {
  await withPolicy(async (policyFile) => {
    const child = new Deno.Command(Deno.execPath(), {
      args: ["run", "-A", LAUNCH, "serve", "--policy", policyFile],
      env: { NO_COLOR: "1" },
      stdin: "piped",
      stdout: "piped",
      stderr: "piped",
    }).spawn();
    const stderrText = new Response(child.stderr).text();
    // Ready means answering: send initialize and wait for the reply line.
    const writer = child.stdin.getWriter();
    await writer.write(new TextEncoder().encode(
      JSON.stringify({
        jsonrpc: "2.0",
        id: 1,
        method: "initialize",
        params: {
          protocolVersion: "2025-06-18",
          capabilities: {},
          clientInfo: { name: "t", version: "1" },
        },
      }) + "\n",
    ));
    const reader = child.stdout.pipeThrough(new TextDecoderStream()).getReader();
    let stdout = "";
    while (!stdout.includes("\n")) {
      const { value, done } = await reader.read();
      if (done) break;
      stdout += value;
    }
    assert.match(stdout, /"protocolVersion"/);
    child.kill("SIGTERM"); // the launcher's pid, as an MCP client would
    const status = await child.status;
    await reader.cancel();
    await writer.close().catch(() => {});
    const stderr = await stderrText;
    assert.match(stderr, /stopped \(received SIGTERM\)/, stderr);
    equal(status.code, 0, stderr);
  });
});

Deno.test("renderExecFragment() hands sh every argument as one word, whatever it holds", async () => {
  const nasty = ["run", "it's", "$HOME", "a b", "`id`", "; rm -rf /", "line\nbreak", "", "-n"];
  const fragment = renderExecFragment(nasty, "/", { HTMCP_FD_LIMIT: "1024" });
  const out = await new Deno.Command("/bin/sh", {
    args: ["-c", `${fragment}\nprintf '%s\\0' "$PWD" "$HTMCP_FD_LIMIT" "$@"`],
    clearEnv: true,
    env: { PATH: "/usr/bin:/bin" },
  }).output();
  assert(out.success, new TextDecoder().decode(out.stderr));
  const words = new TextDecoder().decode(out.stdout).split("\0").slice(0, -1);
  assert.deepEqual(words, ["/", "1024", ...nasty]);
  assert.throws(() => renderExecFragment([], "/", { "A;B": "x" }), RangeError);
});
