import assert, { equal } from "node:assert/strict";
import { prepareJail } from "../_helpers/jail.ts";

const LAUNCH = new URL("../../scripts/launch.ts", import.meta.url).pathname;
const MAIN = new URL("../../src/main.ts", import.meta.url).pathname;
const CONFIG = new URL("../../deno.json", import.meta.url).pathname;

async function withPolicy(fn: (policyFile: string, dir: string) => Promise<void>): Promise<void> {
  const dir = Deno.realPathSync(await Deno.makeTempDir({ prefix: "htmcp-check-" }));
  try {
    await Deno.mkdir(`${dir}/jail`);
    await prepareJail(`${dir}/jail`);
    await Deno.mkdir(`${dir}/log`);
    await Deno.writeTextFile(
      `${dir}/policy.toml`,
      `jail_root = "jail"\naudit_log = "log/audit.jsonl"\n[allowlist]\ncommands = ["ls", "true"]\n`,
    );
    await fn(`${dir}/policy.toml`, dir);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
}

async function deno(args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  const output = await new Deno.Command(Deno.execPath(), {
    args,
    env: { NO_COLOR: "1" },
    stdin: "null",
    stdout: "piped",
    stderr: "piped",
  }).output();
  const decode = (bytes: Uint8Array) => new TextDecoder().decode(bytes);
  return { code: output.code, stdout: decode(output.stdout), stderr: decode(output.stderr) };
}

Deno.test("htmcp check through the task launcher proves the layer: every probe refused with NotCapable", async () => {
  await withPolicy(async (policyFile, dir) => {
    const result = await deno(["run", "-A", LAUNCH, "check", "--policy", policyFile]);
    equal(result.code, 0, result.stdout + result.stderr);
    assert.match(result.stdout, /ls -> \/usr\/bin\/ls/);
    assert.match(result.stdout, /Layer in force: flags/);
    assert.match(
      result.stdout,
      /PASS spawn a binary that is not allowlisted: \/usr\/bin\/id -> NotCapable/,
    );
    assert.match(
      result.stdout,
      /PASS read a file outside the read set: \/etc\/passwd -> NotCapable/,
    );
    assert.doesNotMatch(result.stdout, /^ *FAIL /m);
    assert.match(
      result.stdout,
      /Sandbox: Commands run in the kernel sandbox \(\[sandbox\] mode = "bwrap"\)/,
    );
    assert.match(result.stdout, /ok {3}sandbox \(bwrap\): ran in a new PID namespace/);
    assert.match(result.stdout, /Result: the Deno permission layer is in force\./);
    await assert.rejects(Deno.stat(`${dir}/jail/.htmcp-check-canary`), Deno.errors.NotFound);
  });
});

Deno.test("htmcp check started broad self-confines and still proves the layer", async () => {
  await withPolicy(async (policyFile) => {
    const result = await deno([
      "run",
      "-A",
      "--unstable-worker-options",
      "--config",
      CONFIG,
      MAIN,
      "check",
      "--policy",
      policyFile,
    ]);
    equal(result.code, 0, result.stdout + result.stderr);
    assert.match(result.stdout, /Layer in force: self-confined/);
    assert.doesNotMatch(result.stdout, /^ *FAIL /m);
  });
});

Deno.test("htmcp check exits non-zero when the layer is not in force, zero only with --allow-unconfined", async () => {
  await withPolicy(async (policyFile, dir) => {
    // Plain -A starts itself again under the flags: the layer is in force.
    const reexec = await deno([
      "run",
      "-A",
      "--config",
      CONFIG,
      MAIN,
      "check",
      "--policy",
      policyFile,
    ]);
    equal(reexec.code, 0, reexec.stdout + reexec.stderr);
    assert.match(reexec.stdout, /Layer in force: flags/);
    // Broad, unable to start deno again and without the Worker option: refused.
    const refused = await deno([
      "run",
      "-A",
      `--deny-run=${Deno.execPath()}`,
      "--config",
      CONFIG,
      MAIN,
      "check",
      "--policy",
      policyFile,
    ]);
    assert.notEqual(refused.code, 0);
    const allowed = await deno([
      "run",
      "-A",
      "--config",
      CONFIG,
      MAIN,
      "check",
      "--policy",
      policyFile,
      "--allow-unconfined",
    ]);
    equal(allowed.code, 0, allowed.stderr);
    assert.match(allowed.stdout, /Layer in force: NONE/);
    assert.match(allowed.stdout, /FAIL spawn a binary that is not allowlisted/);
    assert.match(allowed.stdout, /Result: the Deno permission layer is NOT in force\./);
    assert.match(allowed.stderr, /permission layer: NONE/);
    await assert.rejects(
      Deno.stat(`${dir}/jail/.htmcp-check-canary`),
      Deno.errors.NotFound,
      "the write probe cleans up",
    );
  });
});
