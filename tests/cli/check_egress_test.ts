/**
 * `htmcp check` with `[sandbox] network = "allowlist"` and full-control
 * mode: the probes run through the same egress plumbing as serve (the
 * socket bound into the sandbox), the grants are listed, and the mode
 * without the sandbox is refused with its sentence.
 */
import assert from "node:assert/strict";
import { LAUNCH, policyToml, serverEnv } from "../_helpers/stdio_harness.ts";
import { prepareJail } from "../_helpers/jail.ts";
import { egressSocketDir } from "../../src/egress/mod.ts";

async function htmcp(args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  const out = await new Deno.Command(Deno.execPath(), {
    args: ["run", "--quiet", "--allow-all", LAUNCH, ...args],
    env: { ...serverEnv("/tmp"), NO_COLOR: "1" },
    clearEnv: true,
    stdin: "null",
    stdout: "piped",
    stderr: "piped",
  }).output();
  const decode = (bytes: Uint8Array) => new TextDecoder().decode(bytes);
  return { code: out.code, stdout: decode(out.stdout), stderr: decode(out.stderr) };
}

async function withPolicy(
  options: { sandbox?: "bwrap" | "none"; extraToml: string },
  fn: (policy: string, jail: string, auditLog: string) => Promise<void>,
): Promise<void> {
  const dir = await Deno.realPath(await Deno.makeTempDir({ prefix: "htmcp-check-egress-" }));
  const jail = `${dir}/jail`;
  const auditLog = `${dir}/audit/audit.jsonl`;
  try {
    await Deno.mkdir(jail);
    await prepareJail(jail);
    await Deno.mkdir(`${dir}/audit`);
    const policy = `${dir}/policy.toml`;
    await Deno.writeTextFile(policy, policyToml(jail, auditLog, { allow: ["echo"], ...options }));
    await fn(policy, jail, auditLog);
  } finally {
    await Deno.remove(dir, { recursive: true });
    await Deno.remove(egressSocketDir({ jailRoot: jail, auditLog }), { recursive: true })
      .catch(() => {});
  }
}

Deno.test("htmcp check passes the sandbox probe with network allowlist and full control, listing the egress grants", async () => {
  await withPolicy({
    extraToml:
      'network = "allowlist"\nnetwork_allow = ["127.0.0.1:9", "*.example.com:443"]\n[mode]\nfull_control = true\n',
  }, async (policy, jail, auditLog) => {
    const run = await htmcp(["check", "--policy", policy]);
    assert.equal(run.code, 0, run.stdout + run.stderr);
    assert.match(run.stdout, /Network: only the listed hosts, through the egress proxy\./);
    assert.match(run.stdout, /ok {3}sandbox \(bwrap\)/);
    const dir = egressSocketDir({ jailRoot: jail, auditLog });
    assert.match(run.stdout, new RegExp(`net: {3}unix:${dir}/proxy-0\\.sock`));
    assert.match(run.stdout, /127\.0\.0\.1:9, \*\.example\.com:443/);
    assert.match(run.stdout + run.stderr, /FULL-CONTROL MODE IS ON/);
    assert.match(run.stdout, /Result: the Deno permission layer is in force\./);
  });
});

Deno.test("htmcp check refuses full-control mode without the kernel sandbox", async () => {
  await withPolicy(
    { sandbox: "none", extraToml: "[mode]\nfull_control = true\n" },
    async (policy) => {
      const run = await htmcp(["check", "--policy", policy]);
      assert.notEqual(run.code, 0);
      assert.match(
        run.stdout + run.stderr,
        /Policy key "mode\.full_control" is true, which runs shell strings with bash, and that is only allowed inside the kernel sandbox/,
      );
    },
  );
});
