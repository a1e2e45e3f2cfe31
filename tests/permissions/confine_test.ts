import assert, { equal } from "node:assert/strict";
import { buildPermissionSet, renderDenoFlags } from "../../src/permissions/mod.ts";
import { loadPolicy } from "../../src/config/mod.ts";
import { prepareJail } from "../_helpers/jail.ts";

const FIXTURE = new URL("./fixtures/confined_echo.ts", import.meta.url).pathname;
const CONFIG = new URL("../../deno.json", import.meta.url).pathname;

async function withPolicy(fn: (policyFile: string, dir: string) => Promise<void>): Promise<void> {
  const dir = Deno.realPathSync(await Deno.makeTempDir({ prefix: "htmcp-confine-" }));
  try {
    await Deno.mkdir(`${dir}/jail`);
    await prepareJail(`${dir}/jail`);
    await Deno.mkdir(`${dir}/log`);
    await Deno.writeTextFile(
      `${dir}/policy.toml`,
      `jail_root = "jail"\naudit_log = "log/audit.jsonl"\n[allowlist]\ncommands = ["true", "echo"]\n`,
    );
    await fn(`${dir}/policy.toml`, dir);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
}

async function flagsFor(policyFile: string): Promise<readonly string[]> {
  const loaded = await loadPolicy({ policyFile, env: {} });
  if (!loaded.ok) throw new Error(loaded.message);
  const built = await buildPermissionSet(loaded.policy);
  if (!built.ok) throw new Error(built.reason);
  return renderDenoFlags(built.set);
}

async function runFixture(
  denoFlags: readonly string[],
  args: readonly string[],
): Promise<{ code: number; stdout: string[]; stderr: string }> {
  const child = new Deno.Command(Deno.execPath(), {
    args: ["run", ...denoFlags, "--config", CONFIG, FIXTURE, ...args],
    env: { HTMCP_TEST_SECRET: "s3cret", NO_COLOR: "1" },
    stdin: "piped",
    stdout: "piped",
    stderr: "piped",
  }).spawn();
  const writer = child.stdin.getWriter();
  await writer.write(new TextEncoder().encode("probe\nhello\n"));
  await writer.close();
  const output = await child.output();
  const decode = (bytes: Uint8Array) => new TextDecoder().decode(bytes);
  return {
    code: output.code,
    stdout: decode(output.stdout).trim().split("\n"),
    stderr: decode(output.stderr),
  };
}

const CONFINED_PROBES = {
  readOutside: "NotCapable",
  readJail: "ok",
  runUnlisted: "NotCapable",
  runListed: "ok",
  env: "NotCapable",
};

Deno.test("serveConfined() under the generated flags says 'flags' and the core is confined", async () => {
  await withPolicy(async (policyFile) => {
    const result = await runFixture(await flagsFor(policyFile), [policyFile]);
    equal(result.code, 3, result.stderr);
    assert.deepEqual(JSON.parse(result.stdout[0]!), { layer: "flags", ...CONFINED_PROBES });
    assert.deepEqual(JSON.parse(result.stdout[1]!), { echo: "hello" });
    const lines = result.stderr.trim().split("\n");
    equal(lines.length, 1, "exactly one startup line");
    assert.match(lines[0]!, /^htmcp: permission layer: flags \(/);
  });
});

Deno.test("serveConfined() started with -A confines the core in a Worker and says 'self-confined'", async () => {
  await withPolicy(async (policyFile) => {
    const result = await runFixture(["--allow-all", "--unstable-worker-options"], [policyFile]);
    equal(result.code, 3, result.stderr);
    assert.deepEqual(JSON.parse(result.stdout[0]!), { layer: "self-confined", ...CONFINED_PROBES });
    assert.deepEqual(
      JSON.parse(result.stdout[1]!),
      { echo: "hello" },
      "stdio works inside the Worker",
    );
    const lines = result.stderr.trim().split("\n");
    equal(lines.length, 1, result.stderr);
    assert.match(lines[0]!, /^htmcp: permission layer: self-confined \(/);
  });
});

Deno.test("serveConfined() started with -A and no worker options starts itself again under exactly the flags", async () => {
  await withPolicy(async (policyFile) => {
    const result = await runFixture(["--allow-all"], [policyFile]);
    equal(result.code, 3, result.stderr);
    assert.deepEqual(JSON.parse(result.stdout[0]!), { layer: "flags", ...CONFINED_PROBES });
    assert.deepEqual(JSON.parse(result.stdout[1]!), { echo: "hello" }, "stdio passes through");
    assert.doesNotMatch(result.stderr, /Unstable API/);
    const lines = result.stderr.trim().split("\n");
    equal(lines.length, 2, result.stderr);
    assert.match(lines[0]!, /starting again under exactly its flags/);
    assert.match(lines[1]!, /^htmcp: permission layer: flags \(/);
  });
});

Deno.test("serveConfined() with allowUnconfined runs broad and says 'NONE'", async () => {
  await withPolicy(async (policyFile) => {
    const result = await runFixture(["--allow-all"], [policyFile, "--allow-unconfined"]);
    equal(result.code, 3, result.stderr);
    equal(JSON.parse(result.stdout[0]!).layer, "NONE");
    equal(JSON.parse(result.stdout[0]!).readOutside, "ok", "NONE really is unconfined");
    assert.match(
      result.stderr,
      /^htmcp: permission layer: NONE \(--allow-unconfined; broader than the policy: read \(unscoped\)/,
    );
  });
});
