import assert from "node:assert/strict";
import {
  buildLaunchArgv,
  chainTools,
  DEFAULT_LAUNCHER_TOOLS,
  type LaunchPlan,
} from "../../src/exec/mod.ts";
import { makePolicy, TEST_LIMITS } from "../_helpers/policy.ts";

const jail = Deno.makeTempDirSync();
const policy = makePolicy({ jailRoot: jail });
Deno.removeSync(jail);
const target = { path: "/usr/bin/ls", args: ["-la", "; rm -rf /"], cwd: policy.jailRoot };

function plan(over: Partial<LaunchPlan> = {}): LaunchPlan {
  return {
    mode: "none",
    privilege: "root",
    serverIsRoot: true,
    tools: DEFAULT_LAUNCHER_TOOLS,
    backstopMs: 32_000,
    limits: TEST_LIMITS,
    ...over,
  };
}

Deno.test("buildLaunchArgv() opens a PID namespace, dies with the server, and waits in timeout", () => {
  const argv = buildLaunchArgv(plan(), policy, target);
  assert.deepEqual(argv.slice(0, 14), [
    "/usr/bin/unshare",
    "--pid",
    "--",
    "/usr/bin/setpriv",
    "--pdeathsig",
    "KILL",
    "--",
    "/usr/bin/timeout",
    "--foreground",
    "--signal=KILL",
    "--",
    "32.000",
    "/usr/bin/setpriv",
    "--pdeathsig",
  ]);
});

Deno.test("buildLaunchArgv() passes argv verbatim after the absolute command path (no shell)", () => {
  const argv = buildLaunchArgv(plan(), policy, target);
  assert.deepEqual(argv.slice(-3), ["/usr/bin/ls", "-la", "; rm -rf /"]);
  assert.ok(!argv.includes("/bin/sh") && !argv.includes("-c"));
});

Deno.test("buildLaunchArgv() in none mode puts a waiting init with no_new_privs under the namespace", () => {
  const argv = buildLaunchArgv(plan(), policy, target);
  const inner = argv.indexOf("--no-new-privs");
  assert.ok(inner > 0);
  assert.deepEqual(argv.slice(inner + 1, inner + 6), [
    "--",
    "/usr/bin/timeout",
    "--foreground",
    "--",
    "0",
  ]);
});

Deno.test("buildLaunchArgv() uses a user namespace when the server cannot unshare a PID namespace itself", () => {
  const argv = buildLaunchArgv(plan({ privilege: "user", serverIsRoot: false }), policy, target);
  assert.deepEqual(argv.slice(0, 5), [
    "/usr/bin/unshare",
    "--user",
    "--map-current-user",
    "--pid",
    "--",
  ]);
});

Deno.test("buildLaunchArgv() in bwrap mode drops a root server to 65534 before pdeathsig is set", () => {
  const argv = buildLaunchArgv(plan({ mode: "bwrap" }), policy, target);
  assert.deepEqual(argv.slice(0, 8), [
    "/usr/bin/unshare",
    "--pid",
    "--setuid=65534",
    "--setgid=65534",
    "--",
    "/usr/bin/setpriv",
    "--pdeathsig",
    "KILL",
  ]);
  assert.ok(argv.indexOf("/usr/bin/bwrap") > argv.indexOf("/usr/bin/timeout"));
  const sep = argv.lastIndexOf("--");
  assert.deepEqual(argv.slice(sep + 1), ["/usr/bin/ls", "-la", "; rm -rf /"]);
});

Deno.test("buildLaunchArgv() in bwrap mode does not drop privileges a non-root server does not have", () => {
  const argv = buildLaunchArgv(
    plan({ mode: "bwrap", serverIsRoot: false, privilege: "user" }),
    policy,
    target,
  );
  assert.ok(!argv.some((a) => a.startsWith("--setuid") || a.startsWith("--reuid")));
});

Deno.test("buildLaunchArgv() in none mode never changes the uid", () => {
  const argv = buildLaunchArgv(plan(), policy, target);
  assert.ok(!argv.some((a) => a.startsWith("--setuid") || a.startsWith("--reuid")));
});

Deno.test("buildLaunchArgv() wraps the command in prlimit only when a limit is set", () => {
  assert.ok(!buildLaunchArgv(plan(), policy, target).includes("/usr/bin/prlimit"));
  const limited = buildLaunchArgv(
    plan({ limits: { ...TEST_LIMITS, maxProcesses: 64, cpuSeconds: 2 } }),
    policy,
    target,
  );
  const at = limited.indexOf("/usr/bin/prlimit");
  assert.deepEqual(limited.slice(at), [
    "/usr/bin/prlimit",
    "--cpu=2:3",
    "--nproc=64",
    "--",
    "/usr/bin/ls",
    "-la",
    "; rm -rf /",
  ]);
});

Deno.test("chainTools() lists every binary of the chain in exec order", () => {
  assert.deepEqual(chainTools(plan({ mode: "bwrap" })), [
    "/usr/bin/unshare",
    "/usr/bin/setpriv",
    "/usr/bin/timeout",
    "/usr/bin/bwrap",
  ]);
});
