import assert, { equal } from "node:assert/strict";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { processEnv } from "../../src/cli/env.ts";
import { loadPolicy } from "../../src/config/mod.ts";
import { buildPermissionSet, renderDenoFlags } from "../../src/permissions/mod.ts";
import { explainCompileFailure, planCompile } from "../../scripts/compile.ts";
import { bundle } from "../../scripts/bundle.ts";
import { prepareJail } from "../_helpers/jail.ts";

const COMPILE = new URL("../../scripts/compile.ts", import.meta.url).pathname;

async function withPolicy(fn: (policyFile: string, dir: string) => Promise<void>): Promise<void> {
  const dir = Deno.realPathSync(await Deno.makeTempDir({ prefix: "htmcp-dist-" }));
  try {
    await Deno.mkdir(`${dir}/jail`);
    await prepareJail(`${dir}/jail`);
    await Deno.mkdir(`${dir}/log`);
    await Deno.writeTextFile(`${dir}/jail/notes.txt`, "hello from the jail\n");
    await Deno.writeTextFile(
      `${dir}/policy.toml`,
      `jail_root = "jail"\naudit_log = "log/audit.jsonl"\n[allowlist]\ncommands = ["cat", "echo"]\n`,
    );
    await fn(`${dir}/policy.toml`, dir);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
}

/** The flags for `policyFile` as a server with environment `env` computes them. */
async function flagsFor(
  policyFile: string,
  env: Readonly<Record<string, string | undefined>> = processEnv(),
): Promise<readonly string[]> {
  const loaded = await loadPolicy({ policyFile, env });
  if (!loaded.ok) throw new Error(loaded.message);
  const built = await buildPermissionSet(loaded.policy);
  if (!built.ok) throw new Error(built.reason);
  return renderDenoFlags(built.set);
}

Deno.test("planCompile() pins exactly the generated flags and the policy path, never -A", async () => {
  await withPolicy(async (policyFile, dir) => {
    const planned = await planCompile(
      ["--policy", policyFile, "--target", "aarch64-unknown-linux-gnu", "--output", "out/htmcp"],
      dir,
      `${dir}/compile.env`,
    );
    assert(planned.ok, planned.ok ? "" : planned.message);
    const { argv, envFile, output } = planned.plan;
    equal(argv[0], "compile");
    equal(output, `${dir}/out/htmcp`);
    const flags = await flagsFor(policyFile);
    const at = argv.indexOf(flags[0]!);
    assert.deepEqual(
      argv.slice(at, at + flags.length),
      [...flags],
      "the flags, in order, unchanged",
    );
    assert(argv.includes(`--env-file=${dir}/compile.env`));
    assert.deepEqual(argv.slice(argv.indexOf("--target"), argv.indexOf("--target") + 2), [
      "--target",
      "aarch64-unknown-linux-gnu",
    ]);
    assert(!argv.includes("--allow-all") && !argv.includes("-A"));
    equal(envFile, `HTMCP_POLICY_FILE=${policyFile}\n`);
    assert(argv.at(-1)!.endsWith("/src/main.ts"));
  });
});

Deno.test("planCompile() --broad builds the self-confining release form; bad input is one sentence", async () => {
  const broad = await planCompile(["--broad"], "/tmp", "/tmp/x.env");
  assert(broad.ok);
  assert(
    broad.plan.argv.includes("--allow-all") &&
      broad.plan.argv.includes("--unstable-worker-options"),
  );
  equal(broad.plan.envFile, null);
  const target = await planCompile(
    ["--broad", "--target", "mips-unknown-linux"],
    "/tmp",
    "/tmp/x.env",
  );
  assert(!target.ok && target.message.includes("mips-unknown-linux"));
  const neither = await planCompile([], "/tmp", "/tmp/x.env");
  assert(!neither.ok && neither.message.includes("--policy FILE"));
});

Deno.test("deno task compile either writes the binary or explains the denort download failure in one sentence", async () => {
  await withPolicy(async (policyFile, dir) => {
    const output = await new Deno.Command(Deno.execPath(), {
      args: ["run", "-A", COMPILE, "--policy", policyFile, "--output", `${dir}/htmcp`],
      env: { NO_COLOR: "1" },
      stdout: "piped",
      stderr: "piped",
    }).output();
    const stderr = new TextDecoder().decode(output.stderr);
    if (output.success) {
      assert((await Deno.stat(`${dir}/htmcp`)).isFile);
    } else {
      equal(output.code, 1);
      assert.match(stderr, /^compile: deno compile could not download its runtime \(denort\)/);
      assert.doesNotMatch(stderr, /Stack backtrace|Caused by/);
    }
  });
  equal(explainCompileFailure("error: Type checking failed."), null, "other failures pass through");
});

Deno.test("dist/htmcp.js runs offline (empty DENO_DIR, no config) under the generated flags as a real stdio MCP server", async () => {
  await withPolicy(async (policyFile, dir) => {
    const file = `${dir}/htmcp.js`;
    equal(await bundle(file), null);
    const emptyDenoDir = `${dir}/deno_dir`;
    await Deno.mkdir(emptyDenoDir);
    const childEnv = { DENO_DIR: emptyDenoDir, NO_COLOR: "1", PATH: "/usr/bin:/bin" };
    // The child PATH (passed through by default) shapes the set: compute it
    // from the environment the bundle will really run with.
    const flags = await flagsFor(policyFile, childEnv);
    const transport = new StdioClientTransport({
      command: Deno.execPath(),
      args: [
        "run",
        "--no-config",
        "--cached-only",
        ...flags,
        file,
        "serve",
        "--policy",
        policyFile,
      ],
      env: childEnv,
      stderr: "pipe",
    });
    let stderr = "";
    transport.stderr?.on("data", (chunk: Uint8Array) => stderr += new TextDecoder().decode(chunk));
    const client = new Client({ name: "bundle-test", version: "1" });
    await client.connect(transport);
    try {
      const ok = await client.callTool({
        name: "run_command",
        arguments: { command: "cat notes.txt" },
      });
      const okResult = ok.structuredContent as Record<string, unknown>;
      equal(okResult.code, "OK", JSON.stringify(okResult) + stderr);
      equal(okResult.stdout, "hello from the jail\n");
      const denied = await client.callTool({
        name: "run_command",
        arguments: { command: "cat /etc/passwd" },
      });
      equal((denied.structuredContent as Record<string, unknown>).code, "PATH_ESCAPE");
    } finally {
      await client.close();
    }
    const audit = await Deno.readTextFile(`${dir}/log/audit.jsonl`);
    assert.match(audit, /"cat notes.txt"/, "the bundle audits under the write grant");
  });
});
