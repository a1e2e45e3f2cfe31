import assert from "node:assert/strict";
import {
  buildLaunchArgv,
  chainEnvironment,
  chainTools,
  createExecutor,
  DEFAULT_LAUNCHER_TOOLS,
  type LaunchPlan,
  rlimitOptions,
  SANDBOX_HELPER_PATH,
} from "../../src/exec/mod.ts";
import { detectHostLayout, ETC_COPIES, FIRST_COPY_FD } from "../../src/sandbox/mod.ts";
import { makePolicy, TEST_LIMITS } from "../_helpers/policy.ts";
import {
  listProcesses,
  makeJail,
  NO_REDACTION,
  runWithToolRemovedAfterStartup,
  setup,
  uniqueSleep,
  waitForMarker,
} from "./_fixtures.ts";

const jail = Deno.makeTempDirSync();
const policy = makePolicy({ jailRoot: jail });
Deno.removeSync(jail);
const argvTail = ["/usr/bin/ls", "-la", "; rm -rf /"];
const target = { path: "/usr/bin/ls", args: argvTail.slice(1), cwd: policy.jailRoot };

function plan(over: Partial<LaunchPlan> = {}): LaunchPlan {
  return {
    mode: "none",
    privilege: "root",
    serverIsRoot: true,
    runAs: null,
    tools: DEFAULT_LAUNCHER_TOOLS,
    backstopMs: 32_000,
    limits: TEST_LIMITS,
    ...over,
  };
}

const SPAWN = DEFAULT_LAUNCHER_TOOLS.spawn;

Deno.test("buildLaunchArgv() is one helper exec: PID namespace, backstop, then the command", () => {
  assert.deepEqual(buildLaunchArgv(plan(), policy, target), [
    SPAWN,
    "--pidns=root",
    "--backstop-ms=32000",
    "--",
    ...argvTail,
  ]);
});

Deno.test("buildLaunchArgv() passes argv verbatim after the absolute command path (no shell)", () => {
  const argv = buildLaunchArgv(plan(), policy, target);
  assert.deepEqual(argv.slice(-3), ["/usr/bin/ls", "-la", "; rm -rf /"]);
  assert.ok(!argv.includes("/bin/sh") && !argv.includes("-c"));
});

Deno.test("buildLaunchArgv() uses a user namespace when the server cannot unshare a PID namespace itself", () => {
  const argv = buildLaunchArgv(plan({ privilege: "user", serverIsRoot: false }), policy, target);
  assert.deepEqual(argv.slice(0, 2), [SPAWN, "--pidns=user"]);
});

Deno.test("buildLaunchArgv() in bwrap mode drops a root server to the run-as identity and execs bwrap as the init", () => {
  const argv = buildLaunchArgv(
    plan({ mode: "bwrap", runAs: { uid: 65534, gid: 65534 } }),
    policy,
    target,
  );
  const copies = ETC_COPIES.map((file) => `--copy-in=${file}`);
  assert.deepEqual(argv.slice(0, 7 + copies.length), [
    SPAWN,
    "--pidns=root",
    "--setuid=65534",
    "--setgid=65534",
    "--backstop-ms=32000",
    "--init-exec",
    ...copies,
    "--",
  ]);
  assert.equal(argv[7 + copies.length], "/usr/bin/bwrap");
  // The init opens the copies at the descriptors bwrap's --file operations read.
  const bwrap = argv.slice(7 + copies.length);
  ETC_COPIES.forEach((file, i) => {
    const at = bwrap.indexOf(file);
    assert.deepEqual(bwrap.slice(at - 2, at), ["--file", String(FIRST_COPY_FD + i)]);
  });
  // No rlimit to set: bwrap runs the command itself.
  assert.ok(!argv.includes(SANDBOX_HELPER_PATH));
  assert.deepEqual(argv.slice(argv.lastIndexOf("--")), ["--", ...argvTail]);
});

Deno.test("buildLaunchArgv() in bwrap mode with rlimits binds the helper read-only and runs it inside", () => {
  const limits = { ...TEST_LIMITS, openFiles: 64 };
  const argv = buildLaunchArgv(plan({ mode: "bwrap", limits }), policy, target);
  const bind = argv.indexOf(SANDBOX_HELPER_PATH);
  assert.deepEqual(argv.slice(bind - 2, bind + 1), ["--ro-bind", SPAWN, SANDBOX_HELPER_PATH]);
  const sep = argv.lastIndexOf("--");
  assert.deepEqual(argv.slice(sep - 4), [
    "--",
    SANDBOX_HELPER_PATH,
    "--inner",
    "--rlimit=nofile=64:64",
    "--",
    ...argvTail,
  ]);
});

Deno.test("buildLaunchArgv() honours runAs in both modes, and null keeps the server's uid", () => {
  for (const mode of ["none", "bwrap"] as const) {
    const argv = buildLaunchArgv(plan({ mode, runAs: { uid: 1234, gid: 4321 } }), policy, target);
    assert.deepEqual(argv.slice(1, 4), ["--pidns=root", "--setuid=1234", "--setgid=4321"]);
    const kept = buildLaunchArgv(plan({ mode, runAs: null }), policy, target);
    assert.ok(!kept.some((a) => a.startsWith("--setuid") || a.startsWith("--setgid")));
  }
});

Deno.test("buildLaunchArgv() in bwrap mode does not drop privileges a non-root server does not have", () => {
  const argv = buildLaunchArgv(
    plan({ mode: "bwrap", serverIsRoot: false, privilege: "user" }),
    policy,
    target,
  );
  assert.ok(!argv.some((a) => a.startsWith("--setuid") || a.startsWith("--reuid")));
});

Deno.test("buildLaunchArgv() without a run-as identity never changes the uid", () => {
  const argv = buildLaunchArgv(plan(), policy, target);
  assert.ok(!argv.some((a) => a.startsWith("--setuid") || a.startsWith("--reuid")));
});

Deno.test("buildLaunchArgv() passes the rlimits to the innermost helper, only when set", () => {
  assert.ok(!buildLaunchArgv(plan(), policy, target).some((a) => a.startsWith("--rlimit")));
  const limits = { ...TEST_LIMITS, maxProcesses: 64, cpuSeconds: 2 };
  const limited = buildLaunchArgv(plan({ limits }), policy, target);
  assert.deepEqual(limited.slice(3), [
    "--rlimit=cpu=2:3",
    "--rlimit=nproc=64:64",
    "--",
    ...argvTail,
  ]);
  const sandboxed = buildLaunchArgv(plan({ mode: "bwrap", limits }), policy, target);
  const inner = sandboxed.indexOf("--inner");
  assert.deepEqual(sandboxed.slice(inner + 1, inner + 3), [
    "--rlimit=cpu=2:3",
    "--rlimit=nproc=64:64",
  ]);
  assert.ok(sandboxed.findIndex((a) => a.startsWith("--rlimit")) > inner);
});

Deno.test("rlimitOptions() maps each policy limit to its rlimit with equal soft and hard values", () => {
  assert.deepEqual(
    rlimitOptions({
      ...TEST_LIMITS,
      cpuSeconds: 5,
      addressSpaceBytes: 1024,
      maxProcesses: 9,
      fileSizeBytes: 2048,
      openFiles: 32,
    }),
    [
      "--rlimit=cpu=5:6",
      "--rlimit=as=1024:1024",
      "--rlimit=nproc=9:9",
      "--rlimit=fsize=2048:2048",
      "--rlimit=nofile=32:32",
    ],
  );
});

Deno.test("chainTools() lists every binary the launcher executes, in order", () => {
  assert.deepEqual(chainTools(plan({ mode: "bwrap" })), [SPAWN, "/usr/bin/bwrap"]);
  assert.deepEqual(
    chainTools(plan({ mode: "bwrap", limits: { ...TEST_LIMITS, cpuSeconds: 1 } })),
    [SPAWN, "/usr/bin/bwrap", SANDBOX_HELPER_PATH],
  );
  assert.deepEqual(chainTools(plan({ limits: { ...TEST_LIMITS, openFiles: 64 } })), [SPAWN]);
});

Deno.test("chainEnvironment() gives bwrap's tools LC_ALL=C, which bwrap removes before the command", () => {
  const env = { PATH: "/usr/bin", LANG: "C.UTF-8" };
  const bwrap = plan({ mode: "bwrap" });
  assert.deepEqual(chainEnvironment(bwrap, env), { ...env, LC_ALL: "C" });
  const argv = buildLaunchArgv(bwrap, policy, { ...target, env });
  const at = argv.indexOf("--unsetenv");
  assert.deepEqual(argv.slice(at), ["--unsetenv", "LC_ALL", "--", ...argvTail]);
  // No value ever goes on argv (readable by every local user).
  assert.ok(!argv.some((a) => a.includes("C.UTF-8") || a === "/usr/bin"));
});

Deno.test("chainEnvironment() changes nothing in none mode or when the policy passes LC_ALL", () => {
  const env = { PATH: "/usr/bin", LANG: "C.UTF-8" };
  assert.deepEqual(chainEnvironment(plan(), env), env);
  assert.ok(!buildLaunchArgv(plan(), policy, { ...target, env }).includes("--unsetenv"));
  const own = { ...env, LC_ALL: "C.UTF-8" };
  const bwrap = plan({ mode: "bwrap" });
  assert.deepEqual(chainEnvironment(bwrap, own), own);
  assert.ok(!buildLaunchArgv(bwrap, policy, { ...target, env: own }).includes("--unsetenv"));
  // Without the command's environment the argv cannot know: it adds nothing.
  assert.ok(!buildLaunchArgv(bwrap, policy, target).includes("--unsetenv"));
});

Deno.test("[bwrap] run() hands the command an LC_ALL the policy passes, unchanged", async () => {
  const jail = await makeJail();
  try {
    const base = makePolicy({ jailRoot: jail, allow: ["env"] });
    const p = {
      ...base,
      childEnv: { ...base.childEnv, LC_ALL: "C.UTF-8" },
      sandbox: {
        mode: "bwrap" as const,
        network: "none" as const,
        networkAllow: [],
        acceptPathCheckOnly: false,
        user: null,
      },
    };
    const built = await createExecutor(p);
    assert.ok(built.ok, built.ok ? "" : built.message);
    try {
      const out = await built.executor.run({
        callId: "1",
        command: p.allowlist.get("env")!,
        args: [],
        cwd: jail,
        redactor: NO_REDACTION,
      });
      assert.equal(out.code, "OK", out.stderr);
      const lines = out.stdout.trim().split("\n").sort();
      assert.deepEqual(
        lines,
        [
          ...Object.entries(p.childEnv).map(([k, v]) => `${k}=${v}`),
          `PWD=${jail}`,
        ].sort(),
      );
    } finally {
      await built.executor.shutdown();
    }
  } finally {
    await Deno.remove(jail, { recursive: true });
  }
});

Deno.test("run() starts the chain in a new session that the call's launcher leads, apart from the server's and the serving helper's", async () => {
  const s = await setup();
  try {
    // In none mode /proc is the host's: the shell walks its ancestors up to
    // the server (a redirection reads each stat file, no fork), printing
    // "pid ppid pgrp session tty_nr" for each.
    const walk = [
      "p=self",
      "while :; do",
      "  read -r line < /proc/$p/stat || break; rest=${line##*) }; set -- $rest",
      '  echo "${line%% *} $2 $3 $4 $5"',
      '  [ "${line%% *}" = "$0" ] && break; p=$2',
      "done",
    ].join("\n");
    const out = await s.run("sh", ["-c", walk, String(Deno.pid)]);
    assert.equal(out.code, "OK", out.stderr);
    const rows = out.stdout.trim().split("\n").map((l) => l.split(" ").map(Number));
    const server = rows.at(-1)!;
    assert.equal(server[0], Deno.pid);
    // sh <- the namespace's init <- the call's fork of the serving helper
    // <- the serving helper Deno spawned <- the server.
    assert.equal(rows.length, 5, out.stdout);
    const serving = rows.find((r) => r[1] === Deno.pid)!;
    assert.equal(serving[3], serving[0], "the serving helper leads a session of its own");
    assert.equal(serving[4], 0, "with no controlling terminal");
    const launcher = rows.find((r) => r[1] === serving[0])!;
    const leader = launcher[0]!;
    assert.equal(launcher[3], leader, "the call's launcher leads its session");
    assert.equal(launcher[2], leader, "and its process group");
    assert.notEqual(server[3], leader);
    for (const row of rows.slice(0, -2)) {
      assert.equal(row[3], leader, `pid ${row[0]} is in the launcher's session`);
      assert.equal(row[4], 0, `pid ${row[0]} has no controlling terminal`);
    }
  } finally {
    await s.close();
  }
});

for (const mode of ["none", "bwrap"] as const) {
  Deno.test(`[${mode}] terminal signals to the server's process group do not reach the chain`, async () => {
    const m = uniqueSleep();
    // A server that survives ^C, ^\, ^Z and hangup (as under nohup) while one command runs.
    const script = `
      import { createExecutor } from "${new URL("../../src/exec/mod.ts", import.meta.url)}";
      import { createRedactor } from "${new URL("../../src/redact/mod.ts", import.meta.url)}";
      import { makePolicy } from "${new URL("../_helpers/policy.ts", import.meta.url)}";
      for (const s of ["SIGHUP", "SIGINT", "SIGQUIT", "SIGTSTP"]) Deno.addSignalListener(s, () => {});
      const jail = await Deno.makeTempDir();
      await Deno.chmod(jail, 0o755);
      // Commands never run as root: the jail belongs to the uid they run as.
      try { await Deno.chown(jail, 65534, 65534); } catch { /* not root: the jail is ours */ }
      const base = makePolicy({ jailRoot: jail, allow: ["sh"] });
      const policy = { ...base, sandbox: { mode: "${mode}", network: "none", networkAllow: [],
        acceptPathCheckOnly: ${mode === "none"}, user: null },
        limits: { ...base.limits, timeoutMs: 1500 } };
      const built = await createExecutor(policy);
      if (!built.ok) throw new Error(built.message);
      const out = await built.executor.run({ callId: "1", command: policy.allowlist.get("sh"),
        args: ["-c", "sleep ${m}"], cwd: jail, redactor: createRedactor({ enabled: false, entropyFallback: false, extraPatterns: [] }) });
      console.log(JSON.stringify({ code: out.code, signal: out.signal, exitCode: out.exitCode,
        prompt: out.durationMs < 2500 }));
      await built.executor.shutdown();
      await Deno.remove(jail, { recursive: true });
      Deno.exit(0);
    `;
    // The server runs as a shell job: a process group of its own whose
    // parent (bash with job control) is in the same session, so the group is
    // not orphaned and a ^Z would stop its members (the kernel discards it
    // for an orphaned group).
    const shell = new Deno.Command("/bin/bash", {
      args: [
        "-c",
        'set -m; "$0" eval --no-prompt -A "$1" & echo $!; wait $!',
        Deno.execPath(),
        script,
      ],
      stdin: "null",
      stdout: "piped",
      stderr: "piped",
      detached: true,
    }).spawn();
    const stdout = new Response(shell.stdout).text();
    const stderr = new Response(shell.stderr).text();
    await waitForMarker(m, 1, 10_000);
    const job = (await listProcesses()).find((p) =>
      p.argv[0] === Deno.execPath() && p.argv.includes(script)
    );
    assert.ok(job !== undefined, "the server job is running");
    for (const signal of ["SIGHUP", "SIGINT", "SIGQUIT", "SIGTSTP"] as const) {
      Deno.kill(-job.pid, signal);
    }
    const status = await shell.status;
    const [said, complaint] = await Promise.all([stdout, stderr]);
    assert.ok(status.success, complaint);
    const [jobPid, outcome] = said.trim().split("\n");
    assert.equal(Number(jobPid), job.pid);
    // The command ran on until our own timer, and the kill then took effect
    // at once: neither the command nor timeout (which forwards HUP, INT and
    // QUIT, and which a ^Z would stop, freezing its backstop) saw the signals.
    assert.deepEqual(JSON.parse(outcome!), {
      code: "TIMEOUT",
      signal: "SIGKILL",
      exitCode: null,
      prompt: true,
    });
  });
}

Deno.test("run() returns CONTAINMENT_UNAVAILABLE and runs nothing when bwrap vanishes after startup", async () => {
  const { outcome, canaryCreated } = await runWithToolRemovedAfterStartup("bwrap");
  assert.equal(outcome.code, "CONTAINMENT_UNAVAILABLE");
  assert.match(outcome.reason, /htmcp-spawn: cannot start .*bwrap/);
  assert.equal(canaryCreated, false);
});

Deno.test("buildLaunchArgv() spawned detached still puts the command at pid 2 in its own session", async () => {
  const dir = await makeJail();
  try {
    const p = makePolicy({ jailRoot: dir });
    const argv = buildLaunchArgv(plan(), p, {
      path: "/bin/sh",
      args: ["-c", "echo $$"],
      cwd: p.jailRoot,
    });
    const pidOf = async (detached: boolean) => {
      const child = new Deno.Command(argv[0]!, {
        args: argv.slice(1),
        cwd: p.jailRoot,
        clearEnv: true,
        stdin: "null",
        stdout: "piped",
        stderr: "null",
        detached,
      }).spawn();
      const [out] = await Promise.all([new Response(child.stdout).text(), child.status]);
      return out;
    };
    // The helper never forks before the namespace exists: already leading a
    // session (detached) it keeps that one, and the command is pid 2 either way.
    assert.equal(await pidOf(false), "2\n");
    assert.equal(await pidOf(true), "2\n");
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

for (const mode of ["none", "bwrap"] as const) {
  Deno.test(`[${mode}] runAs drops the command to that uid and gid with no supplementary groups`, async () => {
    const dir = await makeJail();
    try {
      const p = makePolicy({ jailRoot: dir });
      const argv = buildLaunchArgv(
        { ...plan({ mode, runAs: { uid: 4242, gid: 4343 } }), layout: detectHostLayout() },
        p,
        { path: "/bin/sh", args: ["-c", "id -u; id -g; id -G; echo $$"], cwd: p.jailRoot },
      );
      const out = await new Deno.Command(argv[0]!, {
        args: argv.slice(1),
        cwd: p.jailRoot,
        clearEnv: true,
        env: { PATH: "/usr/bin:/bin" },
        stdin: "null",
        stdout: "piped",
        stderr: "piped",
      }).output();
      const text = new TextDecoder().decode(out.stdout);
      assert.equal(out.code, 0, new TextDecoder().decode(out.stderr));
      // bwrap maps the dropped identity to itself inside the sandbox.
      assert.deepEqual(text.trim().split("\n"), ["4242", "4343", "4343", "2"]);
    } finally {
      await Deno.remove(dir, { recursive: true });
    }
  });
}

Deno.test("the helper refuses to run a plan outside a PID namespace of its own", async () => {
  // kill(-1) at the end of a plan must never reach the host's processes.
  const out = await new Deno.Command(DEFAULT_LAUNCHER_TOOLS.spawn, {
    args: ["--inner", "--plan"],
    stdin: "null",
    stdout: "piped",
    stderr: "piped",
  }).output();
  assert.equal(out.code, 125);
  assert.match(
    new TextDecoder().decode(out.stderr),
    /^htmcp-spawn: a plan runs only inside a new PID namespace/,
  );
});
