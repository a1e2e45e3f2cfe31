/**
 * The launcher a non-root server uses (`privilege: "user"`): the PID namespace
 * is created inside a user namespace of the server's own. The test drops to
 * an unprivileged uid with setpriv and runs the exact argv the executor
 * would build, in both modes.
 */
import assert from "node:assert/strict";
import { buildLaunchArgv, DEFAULT_LAUNCHER_TOOLS, type LaunchPlan } from "../../src/exec/mod.ts";
import { detectHostLayout } from "../../src/sandbox/mod.ts";
import { makePolicy, TEST_LIMITS } from "../_helpers/policy.ts";
import { makeJail } from "./_fixtures.ts";

const UNPRIVILEGED = "4242";

async function runAsUser(argv: string[], cwd: string) {
  const out = await new Deno.Command("/usr/bin/setpriv", {
    args: [`--reuid=${UNPRIVILEGED}`, `--regid=${UNPRIVILEGED}`, "--clear-groups", "--", ...argv],
    cwd,
    clearEnv: true,
    env: { PATH: "/usr/bin:/bin" },
    stdin: "null",
    stdout: "piped",
    stderr: "piped",
  }).output();
  const text = (b: Uint8Array) => new TextDecoder().decode(b);
  return { code: out.code, stdout: text(out.stdout), stderr: text(out.stderr) };
}

for (const mode of ["none", "bwrap"] as const) {
  Deno.test(`[${mode}] a non-root server's launcher contains the command in a PID namespace`, async () => {
    const jail = await makeJail();
    try {
      const policy = makePolicy({ jailRoot: jail });
      const plan: LaunchPlan = {
        mode,
        privilege: "user",
        serverIsRoot: false,
        tools: DEFAULT_LAUNCHER_TOOLS,
        backstopMs: 10_000,
        limits: { ...TEST_LIMITS, openFiles: 64 },
        layout: detectHostLayout(),
      };
      const argv = buildLaunchArgv(plan, policy, {
        path: "/bin/sh",
        args: ["-c", "echo $$; id -u; ulimit -n"],
        cwd: policy.jailRoot,
      });
      const out = await runAsUser(argv, policy.jailRoot);
      assert.equal(out.code, 0, out.stderr);
      const [pid, uid, nofile] = out.stdout.trim().split("\n");
      assert.equal(pid, "2");
      assert.equal(uid, mode === "bwrap" ? "65534" : UNPRIVILEGED);
      assert.equal(nofile, "64");
    } finally {
      await Deno.remove(jail, { recursive: true });
    }
  });
}
