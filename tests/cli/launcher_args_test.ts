/**
 * The launcher (`deno task htmcp`) and `src/main.ts` share one argument
 * parser: a mistake on the command line gets the same sentence and exit code
 * from both, and the launcher says it before it reads any policy.
 */
import assert from "node:assert/strict";
import { LAUNCH, MAIN, serverEnv } from "../_helpers/stdio_harness.ts";

interface Run {
  code: number;
  stdout: string;
  stderr: string;
}

async function run(entry: string, args: string[], cwd: string): Promise<Run> {
  const out = await new Deno.Command(Deno.execPath(), {
    args: ["run", "--quiet", "--allow-all", entry, ...args],
    // No HTMCP_POLICY_FILE, no HTMCP_JAIL_ROOT: the policy comes from flags only.
    env: serverEnv(cwd),
    clearEnv: true,
    cwd,
    stdin: "null",
  }).output();
  const decode = (bytes: Uint8Array) => new TextDecoder().decode(bytes);
  return { code: out.code, stdout: decode(out.stdout), stderr: decode(out.stderr) };
}

const CASES: ReadonlyArray<{ args: string[]; code: number; stderr: RegExp | null }> = [
  {
    args: ["--polcy", "policy.toml"],
    code: 2,
    stderr: /^htmcp: Unknown flag "--polcy"; see htmcp --help\.\n$/,
  },
  {
    args: ["serve", "--polcy=policy.toml"],
    code: 2,
    stderr: /^htmcp: Unknown flag "--polcy=policy\.toml"/,
  },
  {
    args: ["serve"],
    code: 2,
    stderr:
      /^htmcp: No policy given: pass --policy FILE or set HTMCP_POLICY_FILE; see htmcp --help\.\n$/,
  },
  { args: ["explain", "--", "ls"], code: 2, stderr: /^htmcp: No policy given/ },
  { args: ["frobnicate"], code: 2, stderr: /^htmcp: Unknown command "frobnicate"/ },
  { args: ["--help"], code: 0, stderr: null },
  { args: ["serve", "--help"], code: 0, stderr: null },
];

for (const { args, code, stderr } of CASES) {
  Deno.test(`the launcher and main.ts answer "htmcp ${args.join(" ")}" alike (exit ${code})`, async () => {
    const cwd = await Deno.makeTempDir({ prefix: "htmcp-args-" });
    try {
      const viaLauncher = await run(LAUNCH, args, cwd);
      const direct = await run(MAIN, args, cwd);
      assert.equal(viaLauncher.code, code, viaLauncher.stderr);
      assert.equal(direct.code, code, direct.stderr);
      assert.equal(viaLauncher.stderr, direct.stderr);
      assert.equal(viaLauncher.stdout, direct.stdout);
      if (stderr === null) assert.match(viaLauncher.stdout, /^Usage:$/m);
      else assert.match(viaLauncher.stderr, stderr);
      assert.doesNotMatch(viaLauncher.stderr, /jail_root/);
    } finally {
      await Deno.remove(cwd, { recursive: true });
    }
  });
}

Deno.test("the launcher checks flags before it reads the policy: a bad flag beats a missing file", async () => {
  const cwd = await Deno.makeTempDir({ prefix: "htmcp-args-" });
  try {
    const result = await run(LAUNCH, ["--policy", "/nonexistent/policy.toml", "--polcy", "x"], cwd);
    assert.equal(result.code, 2);
    assert.match(result.stderr, /Unknown flag "--polcy"/);
    assert.doesNotMatch(result.stderr, /nonexistent/);
  } finally {
    await Deno.remove(cwd, { recursive: true });
  }
});
