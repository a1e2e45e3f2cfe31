/**
 * The launcher a non-root server uses (`privilege: "user"`): the PID namespace
 * is created inside a user namespace of the server's own. The test drops to
 * an unprivileged uid with setpriv and runs the exact argv the executor
 * would build, in both modes.
 */
import assert from "node:assert/strict";
import {
  buildCallLaunch,
  type CallLaunch,
  DEFAULT_LAUNCHER_TOOLS,
  type LaunchPlan,
} from "../../src/exec/mod.ts";
import { detectHostLayout } from "../../src/sandbox/mod.ts";
import { makePolicy, TEST_LIMITS } from "../_helpers/policy.ts";
import { makeJail, spawnLaunch } from "./_fixtures.ts";

const UNPRIVILEGED = "4242";

/** The launch as a non-root server would start it. */
function runAsUser(launch: CallLaunch) {
  return spawnLaunch(launch, {
    via: [
      "/usr/bin/setpriv",
      `--reuid=${UNPRIVILEGED}`,
      `--regid=${UNPRIVILEGED}`,
      "--clear-groups",
      "--",
    ],
  });
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
        runAs: null,
        tools: DEFAULT_LAUNCHER_TOOLS,
        backstopMs: 10_000,
        limits: { ...TEST_LIMITS, openFiles: 64 },
        layout: detectHostLayout(),
      };
      const launch = buildCallLaunch(plan, policy, {
        path: "/bin/sh",
        args: ["-c", "echo $$; id -u; ulimit -n"],
        cwd: policy.jailRoot,
        env: { PATH: "/usr/bin:/bin" },
      });
      const out = await runAsUser(launch);
      assert.equal(out.code, 0, out.stderr);
      const [pid, uid, nofile] = out.stdout.trim().split("\n");
      assert.equal(pid, "2");
      // A non-root server runs commands as itself in both modes (mapped in its user namespace).
      assert.equal(uid, UNPRIVILEGED);
      assert.equal(nofile, "64");
    } finally {
      await Deno.remove(jail, { recursive: true });
    }
  });
}
