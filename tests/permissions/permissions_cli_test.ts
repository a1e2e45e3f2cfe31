import assert, { equal } from "node:assert/strict";
import { processEnv } from "../../src/cli/env.ts";
import { loadPolicy } from "../../src/config/mod.ts";
import { buildPermissionSet, renderDenoFlags, shellLine } from "../../src/permissions/mod.ts";
import { prepareJail } from "../_helpers/jail.ts";

const LAUNCH = new URL("../../scripts/launch.ts", import.meta.url).pathname;

async function withPolicy(fn: (policyFile: string) => Promise<void>): Promise<void> {
  const dir = Deno.realPathSync(await Deno.makeTempDir({ prefix: "htmcp-perm-cli-" }));
  try {
    await Deno.mkdir(`${dir}/jail`);
    await prepareJail(`${dir}/jail`);
    await Deno.mkdir(`${dir}/log`);
    await Deno.writeTextFile(
      `${dir}/policy.toml`,
      `jail_root = "jail"\naudit_log = "log/audit.jsonl"\n[allowlist]\ncommands = ["ls"]\n[http]\nlisten = "127.0.0.1:8080"\n`,
    );
    await fn(`${dir}/policy.toml`);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
}

async function htmcp(args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  const output = await new Deno.Command(Deno.execPath(), {
    args: ["run", "-A", LAUNCH, ...args],
    env: { NO_COLOR: "1" },
    stdout: "piped",
    stderr: "piped",
  }).output();
  const decode = (bytes: Uint8Array) => new TextDecoder().decode(bytes);
  return { code: output.code, stdout: decode(output.stdout), stderr: decode(output.stderr) };
}

Deno.test("htmcp permissions prints the flags, JSON and systemd forms of one set, per transport", async () => {
  await withPolicy(async (policyFile) => {
    const loaded = await loadPolicy({ policyFile, env: processEnv() });
    assert(loaded.ok);
    const stdio = await buildPermissionSet(loaded.policy, { transport: "stdio" });
    assert(stdio.ok);

    const flags = await htmcp(["permissions", "--policy", policyFile, "--transport", "stdio"]);
    equal(flags.code, 0, flags.stderr);
    equal(flags.stdout.trim(), shellLine(renderDenoFlags(stdio.set)));

    const json = await htmcp(["permissions", "--policy", policyFile, "--format", "json"]);
    equal(json.code, 0, json.stderr);
    const parsed = JSON.parse(json.stdout);
    equal(parsed.transport, "http", "[http] listen makes HTTP the default, as for serve");
    assert.deepEqual(parsed.net.map((g: { value: string }) => g.value), ["127.0.0.1:8080"]);

    const unit = await htmcp([
      "permissions",
      "--policy",
      policyFile,
      "--format",
      "systemd",
      "--transport",
      "http",
    ]);
    equal(unit.code, 0, unit.stderr);
    assert.match(unit.stdout, /^ExecStart=.* --allow-net=127\.0\.0\.1:8080 /m);
    assert.match(unit.stdout, /^RestrictAddressFamilies=AF_UNIX AF_INET AF_INET6$/m);
  });
});

Deno.test("htmcp permissions refuses unknown formats and transports with exit 2", async () => {
  await withPolicy(async (policyFile) => {
    const format = await htmcp(["permissions", "--policy", policyFile, "--format", "yaml"]);
    equal(format.code, 2);
    assert.match(format.stderr, /--format is "yaml"/);
    const transport = await htmcp(["permissions", "--policy", policyFile, "--transport", "tcp"]);
    equal(transport.code, 2);
  });
});
