import assert from "node:assert/strict";
import {
  buildCallLaunch,
  chainEnvironment,
  chainTools,
  createExecutor,
  DEFAULT_LAUNCHER_TOOLS,
  type LaunchPlan,
  type LaunchTarget,
  rlimitOptions,
  SANDBOX_HELPER_PATH,
  SANDBOX_TOOL_ENV,
  sandboxArgv,
} from "../../src/exec/mod.ts";
import { detectHostLayout, ETC_COPIES, FIRST_COPY_FD } from "../../src/sandbox/mod.ts";
import { makePolicy, TEST_LIMITS } from "../_helpers/policy.ts";
import { exists } from "../_helpers/exists.ts";
import {
  helperCall,
  listProcesses,
  makeJail,
  NO_REDACTION,
  runWithToolRemovedAfterStartup,
  setup,
  spawnLaunch,
  uniqueSleep,
  waitForMarker,
  withToolCopy,
} from "./_fixtures.ts";

const jail = Deno.makeTempDirSync();
const policy = makePolicy({ jailRoot: jail });
// The suite has no sys permission for Deno.uid(): ask id(1).
const ROOT =
  new TextDecoder().decode((await new Deno.Command("id", { args: ["-u"] }).output()).stdout)
    .trim() === "0";
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

/** Mode none: the call's whole argv. */
const argvOf = (p: LaunchPlan, t: LaunchTarget = target) => buildCallLaunch(p, policy, t).argv;

Deno.test("buildCallLaunch() in mode none is one helper exec: PID namespace, backstop, then the command", () => {
  const launch = buildCallLaunch(plan(), policy, target);
  assert.deepEqual(launch.argv, [
    SPAWN,
    "--pidns=root",
    "--backstop-ms=32000",
    "--",
    ...argvTail,
  ]);
  assert.equal(launch.cwd, policy.jailRoot);
  assert.equal(launch.sandbox, null);
});

Deno.test("buildCallLaunch() passes argv verbatim after the absolute command path (no shell)", () => {
  const argv = argvOf(plan());
  assert.deepEqual(argv.slice(-3), ["/usr/bin/ls", "-la", "; rm -rf /"]);
  assert.ok(!argv.includes("/bin/sh") && !argv.includes("-c"));
  const sandbox = buildCallLaunch(plan({ mode: "bwrap" }), policy, target).sandbox!;
  assert.deepEqual(sandbox.args.slice(-4), ["--", ...argvTail]);
});

Deno.test("buildCallLaunch() uses a user namespace when the server cannot unshare a PID namespace itself", () => {
  const argv = argvOf(plan({ privilege: "user", serverIsRoot: false }));
  assert.deepEqual(argv.slice(0, 2), [SPAWN, "--pidns=user"]);
});

Deno.test("sandboxArgv() drops a root server to the run-as identity, execs bwrap as the init, and waits for the call", () => {
  const p = plan({ mode: "bwrap", runAs: { uid: 65534, gid: 65534 } });
  const argv = sandboxArgv(p, policy);
  const copies = ETC_COPIES.map((file) => `--copy-in=${file}`);
  assert.deepEqual(argv.slice(0, 7 + copies.length), [
    SPAWN,
    "--pidns=root",
    "--setuid=65534",
    "--setgid=65534",
    "--backstop-at-go",
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
  // The helper bound read-only inside, waiting for the call on stdin.
  const bind = argv.indexOf(SANDBOX_HELPER_PATH);
  assert.deepEqual(argv.slice(bind - 2, bind + 1), ["--ro-bind", SPAWN, SANDBOX_HELPER_PATH]);
  assert.deepEqual(argv.slice(argv.lastIndexOf("--")), [
    "--",
    SANDBOX_HELPER_PATH,
    "--inner",
    "--request",
  ]);
  // Nothing of the call is on it: the same argv serves every call.
  assert.deepEqual(buildCallLaunch(p, policy, target).argv, argv);
  assert.ok(!argv.some((a) => a.startsWith("--backstop-ms") || argvTail.includes(a)));
});

Deno.test("buildCallLaunch() in bwrap mode puts the call in the sandbox's request: cwd, whole environment, rlimits, command", () => {
  const limits = { ...TEST_LIMITS, openFiles: 64 };
  const env = { PATH: "/usr/bin", LANG: "C.UTF-8" };
  const launch = buildCallLaunch(plan({ mode: "bwrap", limits }), policy, {
    ...target,
    env,
    stdinText: true,
  });
  assert.deepEqual(launch.sandbox, {
    cwd: policy.jailRoot,
    env,
    args: ["--inner", "--rlimit=nofile=64:64", "--", ...argvTail],
    backstopMs: 32000,
    stdin: "piped",
  });
  // bwrap itself runs in the C locale, with nothing of the command's.
  assert.equal(launch.cwd, "/");
  assert.deepEqual(launch.env, SANDBOX_TOOL_ENV);
  assert.ok(!launch.argv.some((a) => a.includes("C.UTF-8") || a === "/usr/bin"));
  const quiet = buildCallLaunch(plan({ mode: "bwrap" }), policy, { ...target, go: "null" });
  assert.equal(quiet.sandbox!.stdin, "null");
});

Deno.test("buildCallLaunch() honours runAs in both modes, and null keeps the server's uid", () => {
  for (const mode of ["none", "bwrap"] as const) {
    const argv = argvOf(plan({ mode, runAs: { uid: 1234, gid: 4321 } }));
    assert.deepEqual(argv.slice(1, 4), ["--pidns=root", "--setuid=1234", "--setgid=4321"]);
    const kept = argvOf(plan({ mode, runAs: null }));
    assert.ok(!kept.some((a) => a.startsWith("--setuid") || a.startsWith("--setgid")));
  }
});

Deno.test("buildCallLaunch() in bwrap mode does not drop privileges a non-root server does not have", () => {
  const argv = argvOf(plan({ mode: "bwrap", serverIsRoot: false, privilege: "user" }));
  assert.ok(!argv.some((a) => a.startsWith("--setuid") || a.startsWith("--reuid")));
});

Deno.test("buildCallLaunch() without a run-as identity never changes the uid", () => {
  const argv = argvOf(plan());
  assert.ok(!argv.some((a) => a.startsWith("--setuid") || a.startsWith("--reuid")));
});

Deno.test("buildCallLaunch() passes the rlimits to the innermost helper, only when set", () => {
  assert.ok(!argvOf(plan()).some((a) => a.startsWith("--rlimit")));
  const limits = { ...TEST_LIMITS, maxProcesses: 64, cpuSeconds: 2 };
  assert.deepEqual(argvOf(plan({ limits })).slice(3), [
    "--rlimit=cpu=2:3",
    "--rlimit=nproc=64:64",
    "--",
    ...argvTail,
  ]);
  const sandboxed = buildCallLaunch(plan({ mode: "bwrap", limits }), policy, target);
  assert.deepEqual(sandboxed.sandbox!.args.slice(0, 3), [
    "--inner",
    "--rlimit=cpu=2:3",
    "--rlimit=nproc=64:64",
  ]);
  assert.ok(!sandboxed.argv.some((a) => a.startsWith("--rlimit")));
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
  assert.deepEqual(chainTools(plan({ mode: "bwrap" })), [
    SPAWN,
    "/usr/bin/bwrap",
    SANDBOX_HELPER_PATH,
  ]);
  assert.deepEqual(chainTools(plan({ limits: { ...TEST_LIMITS, openFiles: 64 } })), [SPAWN]);
});

Deno.test("chainEnvironment() is the command's environment, with the proxy variables only while egress is on", () => {
  const env = { PATH: "/usr/bin", LANG: "C.UTF-8" };
  assert.deepEqual(chainEnvironment(plan(), env), env);
  assert.deepEqual(chainEnvironment(plan({ mode: "bwrap" }), env), env);
  const proxied = chainEnvironment(plan({ mode: "bwrap", egressSocket: "/run/x.sock" }), env);
  assert.equal(proxied.HTTPS_PROXY, "http://127.0.0.1:3128");
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
        ].sort(),
      );
    } finally {
      await built.executor.shutdown();
    }
  } finally {
    await Deno.remove(jail, { recursive: true });
  }
});

Deno.test("run() starts the chain in a new session that the namespace's init leads, apart from the server's and the serving helper's", async () => {
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
    // sh <- the namespace's init, which the serving helper cloned into the
    // new namespace <- the serving helper Deno spawned <- the server.
    assert.equal(rows.length, 4, out.stdout);
    const serving = rows.find((r) => r[1] === Deno.pid)!;
    assert.equal(serving[3], serving[0], "the serving helper leads a session of its own");
    assert.equal(serving[4], 0, "with no controlling terminal");
    const init = rows.find((r) => r[1] === serving[0])!;
    const leader = init[0]!;
    assert.equal(init[3], leader, "the namespace's init leads its session");
    assert.equal(init[2], leader, "and its process group");
    assert.notEqual(server[3], leader);
    for (const row of rows.slice(0, -2)) {
      assert.equal(row[3], leader, `pid ${row[0]} is in the init's session`);
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

Deno.test("a serving helper that already leads a session still serves its calls, the command at pid 2", async () => {
  const dir = await makeJail();
  try {
    const p = makePolicy({ jailRoot: dir });
    const launch = buildCallLaunch(plan(), p, {
      path: "/bin/sh",
      args: ["-c", "echo $$"],
      cwd: p.jailRoot,
    });
    // setsid(1) makes the helper a session leader before it starts, as a
    // server started detached would: its own setsid() then fails, and it
    // keeps that session rather than giving up.
    for (const via of [[], ["/usr/bin/setsid"]]) {
      const out = await spawnLaunch(launch, { via });
      assert.equal(out.code, 0, out.stderr);
      assert.equal(out.stdout, "2\n", via.join(" "));
    }
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("a contained call started without --serve is refused: 125 and the line, nothing runs", async () => {
  const dir = await makeJail();
  try {
    const canary = `${dir}/canary`;
    const argv = buildCallLaunch(plan(), makePolicy({ jailRoot: dir }), {
      path: "/usr/bin/touch",
      args: [canary],
      cwd: dir,
    }).argv;
    // The serving helper is the one outer of every contained call: a
    // second, one-off outer would be a second place for the backstop and
    // the kill requests to go wrong.
    const out = await new Deno.Command(argv[0]!, {
      args: argv.slice(1),
      cwd: dir,
      clearEnv: true,
      stdin: "null",
      stdout: "piped",
      stderr: "piped",
    }).output();
    assert.equal(out.code, 125);
    assert.equal(
      new TextDecoder().decode(out.stderr),
      "htmcp-spawn: --pidns= runs only as a call of --serve: Invalid argument\n",
    );
    assert.equal(await exists(canary), false);
    // The same launch as a call of a serving helper runs: the refusal is the one-off's.
    assert.equal((await spawnLaunch({ argv, cwd: dir, env: {}, sandbox: null })).code, 0);
    assert.equal(await exists(canary), true);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("[none] a contained call's init is the helper executed anew: --as-init, its working folder, then the call's options", async () => {
  const s = await setup();
  try {
    // /proc is the host's in mode none: the command's parent by its host pid.
    const parent = [
      "read -r line < /proc/self/stat; rest=${line##*) }; set -- $rest",
      'tr "\\0" " " < /proc/$2/cmdline',
    ].join("\n");
    const out = await s.run("sh", ["-c", parent]);
    assert.equal(out.code, "OK", out.stderr);
    // A fresh image of its own, so it shares no page with the serving helper
    // (the clone that made it shared the helper's memory only until this exec).
    assert.ok(
      out.stdout.startsWith(`${SPAWN} --as-init ${s.jail} --pidns=`),
      `the command's parent: ${out.stdout}`,
    );
    assert.match(out.stdout, / -- \S*\/sh -c read /);
  } finally {
    await s.close();
  }
});

Deno.test("[none] the helper's file replaced while it serves: every init is still the file the serving helper runs", async () => {
  await withToolCopy("spawn", async ({ executor, copy, tools, sh }) => {
    const marker = `${tools}/replacement-ran`;
    assert.equal((await sh("1", "echo $$")).stdout, "2\n");
    // A new file at the helper's path (a new inode), which would leave a mark.
    await Deno.remove(copy);
    await Deno.writeTextFile(copy, `#!/bin/sh\ntouch ${marker}\nexit 0\n`, { mode: 0o755 });
    // The inits execute the file the serving helper was started from (its
    // descriptor of /proc/self/exe, the binary the server verified): never
    // whatever the path names now.
    const after = await sh("2", "echo $$");
    assert.equal(after.code, "OK", after.stderr);
    assert.equal(after.stdout, "2\n");
    await executor.shutdown();
    assert.equal(await exists(marker), false);
  });
});

Deno.test("--as-init outside a new PID namespace is refused: 125 and the line, nothing runs", async () => {
  const dir = await makeJail();
  try {
    const canary = `${dir}/canary`;
    // Only pid 1 of a namespace may be an init: its end is what ends the tree.
    const out = await new Deno.Command(SPAWN, {
      args: ["--as-init", dir, "--pidns=root", "--", "/usr/bin/touch", canary],
      clearEnv: true,
      stdin: "null",
      stdout: "piped",
      stderr: "piped",
    }).output();
    assert.equal(out.code, 125);
    assert.equal(
      new TextDecoder().decode(out.stderr),
      "htmcp-spawn: --as-init outside a new PID namespace: Operation not permitted\n",
    );
    assert.equal(await exists(canary), false);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("an argument too long to execute fails as the command's execution: 126 and its line", async () => {
  // The init is executed with the command's arguments and environment, so
  // the init's exec meets the limit first: reported as the command's would be.
  const out = await helperCall(
    [ROOT ? "--pidns=root" : "--pidns=user"],
    ["/usr/bin/echo", "a".repeat(200_000)],
  );
  assert.equal(out.code, 126);
  assert.equal(
    out.stderr,
    "htmcp-spawn: failed to execute /usr/bin/echo: Argument list too long\n",
  );
  assert.equal(out.stdout, "");
});

for (const mode of ["none", "bwrap"] as const) {
  Deno.test(`[${mode}] runAs drops the command to that uid and gid with no supplementary groups`, async () => {
    const dir = await makeJail();
    try {
      const p = makePolicy({ jailRoot: dir });
      const launch = buildCallLaunch(
        { ...plan({ mode, runAs: { uid: 4242, gid: 4343 } }), layout: detectHostLayout() },
        p,
        {
          path: "/bin/sh",
          args: ["-c", "id -u; id -g; id -G; echo $$"],
          cwd: p.jailRoot,
          env: { PATH: "/usr/bin:/bin" },
        },
      );
      const out = await spawnLaunch(launch);
      const text = out.stdout;
      assert.equal(out.code, 0, out.stderr);
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
