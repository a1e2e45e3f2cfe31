/**
 * What the tests of the installed command share: a policy with a prepared
 * jail, a clean-environment runner, and \`deno task install\` into a temp
 * prefix.
 */
import { prepareJail } from "../_helpers/jail.ts";
import assert from "node:assert/strict";
import { join } from "node:path";
import { REPO } from "../_helpers/stdio_harness.ts";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";

export const DENO_DIR = Deno.env.get("DENO_DIR") ??
  `${Deno.env.get("HOME") ?? "/root"}/.cache/deno`;

export async function writePolicy(dir: string): Promise<string> {
  await Deno.mkdir(join(dir, "jail"));
  await Deno.mkdir(join(dir, "log"));
  await Deno.writeTextFile(join(dir, "jail", "notes.txt"), "installed\n");
  // Commands run in the kernel sandbox as the jail's owner: hand the jail to it.
  await prepareJail(join(dir, "jail"));
  const policy = join(dir, "policy.toml");
  await Deno.writeTextFile(
    policy,
    `jail_root = "jail"
audit_log = "log/audit.jsonl"

[allowlist]
commands = ["cat", "echo"]
`,
  );
  return policy;
}

export async function run(
  command: string,
  args: string[],
  env: Record<string, string>,
  cwd?: string,
) {
  const out = await new Deno.Command(command, {
    args,
    env,
    clearEnv: true,
    ...(cwd === undefined ? {} : { cwd }),
    stdin: "null",
  }).output();
  const decode = (bytes: Uint8Array) => new TextDecoder().decode(bytes);
  return { code: out.code, stdout: decode(out.stdout), stderr: decode(out.stderr) };
}

/**
 * `deno task install --prefix DIR/prefix` run in `checkout` (this one by
 * default); the prefix, an env with its bin on PATH, the copied lib, and
 * what the install printed.
 */
export async function installHere(dir: string, checkout = REPO) {
  const prefix = join(dir, "prefix");
  const env = { PATH: `${prefix}/bin:/usr/local/bin:/usr/bin:/bin`, HOME: dir, DENO_DIR };
  const installed = await run(
    Deno.execPath(),
    ["task", "--quiet", "install", "--prefix", prefix],
    env,
    checkout,
  );
  assert.equal(installed.code, 0, installed.stderr);
  const [version] = [...Deno.readDirSync(join(prefix, "lib", "htmcp"))].map((e) => e.name);
  return {
    prefix,
    env,
    lib: join(prefix, "lib", "htmcp", version as string),
    stdout: installed.stdout,
  };
}

/** Connects the SDK client to `command args` (started in `cwd`) over stdio and runs one command. */
export async function driveOverStdio(
  command: string,
  args: string[],
  env: Record<string, string>,
  cwd?: string,
) {
  const transport = new StdioClientTransport({
    command,
    args,
    env,
    stderr: "pipe",
    ...(cwd === undefined ? {} : { cwd }),
  });
  let stderr = "";
  transport.stderr?.on("data", (chunk: Uint8Array) => stderr += new TextDecoder().decode(chunk));
  const client = new Client({ name: "install-test", version: "1" });
  await client.connect(transport);
  try {
    assert.equal(client.getServerVersion()?.name, "htmcp");
    const { tools } = await client.listTools();
    assert.ok(tools.some((tool: { name: string }) => tool.name === "run_command"));
    const result = await client.callTool({
      name: "run_command",
      arguments: { command: "cat notes.txt" },
    });
    const body = result.structuredContent as { code: string; stdout: string };
    assert.equal(body.code, "OK", JSON.stringify(body) + stderr);
    assert.equal(body.stdout, "installed\n");
  } finally {
    await client.close();
  }
  return stderr;
}
