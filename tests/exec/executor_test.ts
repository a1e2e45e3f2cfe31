import assert from "node:assert/strict";
import { createExecutor, DEFAULT_LAUNCHER_TOOLS } from "../../src/exec/mod.ts";
import { createRedactor } from "../../src/redact/mod.ts";
import { makePolicy, TEST_LIMITS } from "../_helpers/policy.ts";
import { makeJail, NO_REDACTION, runWithToolRemovedAfterStartup, setup } from "./_fixtures.ts";

Deno.test("run() executes the absolute path with argv verbatim: shell syntax is just text", async () => {
  const s = await setup();
  try {
    const out = await s.run("echo", ["a;", "touch", "canary", "&&", "$(id)", "`id`", "*"]);
    assert.equal(out.code, "OK");
    assert.equal(out.stdout, "a; touch canary && $(id) `id` *\n");
    await assert.rejects(Deno.stat(`${s.jail}/canary`), Deno.errors.NotFound);
  } finally {
    await s.close();
  }
});

Deno.test("run() reports exit status, stderr and byte counts", async () => {
  const s = await setup();
  try {
    const out = await s.run("sh", ["-c", "echo out; echo err >&2; exit 3"]);
    assert.equal(out.code, "OK");
    assert.equal(out.exitCode, 3);
    assert.equal(out.signal, null);
    assert.equal(out.stdout, "out\n");
    assert.equal(out.stderr, "err\n");
    assert.equal(out.stdoutBytes, 4);
    assert.equal(out.stderrBytes, 4);
    assert.equal(out.truncated, false);
    assert.match(out.reason, /"sh" exited with status 3\./);
  } finally {
    await s.close();
  }
});

Deno.test("run() gives the child only the policy's environment", async () => {
  Deno.env.set("HTMCP_TEST_SECRET", "must-not-leak");
  const s = await setup();
  try {
    const out = await s.run("env", []);
    assert.equal(out.code, "OK");
    const names = out.stdout.trim().split("\n").map((l) => l.split("=")[0]).sort();
    assert.deepEqual(names, Object.keys(s.policy.childEnv).sort());
    assert.ok(!out.stdout.includes("must-not-leak"));
  } finally {
    Deno.env.delete("HTMCP_TEST_SECRET");
    await s.close();
  }
});

Deno.test("run() runs in the requested cwd with stdin closed", async () => {
  const s = await setup();
  try {
    await Deno.mkdir(`${s.jail}/sub`);
    const pwd = await s.run("pwd", [], { cwd: `${s.jail}/sub` });
    assert.equal(pwd.stdout, `${s.jail}/sub\n`);
    // cat with no file reads stdin: /dev/null ends it at once instead of hanging.
    const cat = await s.run("cat", []);
    assert.equal(cat.code, "OK");
    assert.equal(cat.stdout, "");
  } finally {
    await s.close();
  }
});

Deno.test("run() puts the command in a PID namespace, in its own session", async () => {
  const s = await setup();
  try {
    // $$ is the shell's pid in the namespace; the session id differs from the server's.
    const out = await s.run("sh", ["-c", "echo $$"]);
    assert.equal(out.stdout, "2\n");
  } finally {
    await s.close();
  }
});

Deno.test("run() returns TIMEOUT with the output so far, redacted", async () => {
  const s = await setup({ limits: { timeoutMs: 400 } });
  try {
    // The server's redactor, over a real key shape: output so far is redacted too.
    const out = await s.run("sh", ["-c", "echo token=AKIAIOSFODNN7EXAMPLE; sleep 30"], {
      redactor: createRedactor(s.policy.redaction),
    });
    assert.equal(out.code, "TIMEOUT");
    assert.equal(out.exitCode, null);
    assert.equal(out.signal, "SIGKILL");
    assert.equal(out.stdout, "token=[REDACTED:aws_access_key_id]\n");
    assert.ok(out.durationMs >= 400 && out.durationMs < 3_000, String(out.durationMs));
    assert.match(out.reason, /400 ms limit/);
  } finally {
    await s.close();
  }
});

Deno.test("run() returns CANCELLED when the signal aborts, and before start when already aborted", async () => {
  const s = await setup();
  try {
    const controller = new AbortController();
    const running = s.run("sleep", ["30"], { signal: controller.signal });
    setTimeout(() => controller.abort(), 100);
    const out = await running;
    assert.equal(out.code, "CANCELLED");
    assert.ok(out.durationMs < 3_000);

    const early = await s.run("sh", ["-c", "touch canary"], { signal: AbortSignal.abort() });
    assert.equal(early.code, "CANCELLED");
    await assert.rejects(Deno.stat(`${s.jail}/canary`), Deno.errors.NotFound);
  } finally {
    await s.close();
  }
});

Deno.test("run() caps each stream while streaming and marks the cut", async () => {
  const s = await setup({ limits: { maxOutputBytes: 1000 } });
  try {
    const out = await s.run("head", ["-c", "50000", "/dev/zero"]);
    assert.equal(out.code, "OUTPUT_TRUNCATED");
    assert.equal(out.exitCode, 0);
    assert.equal(out.truncated, true);
    assert.equal(out.stdoutBytes, 50_000);
    assert.match(out.stdout, /49000 of 50000 bytes dropped/);
    assert.ok(new TextEncoder().encode(out.stdout).byteLength < 1200);
  } finally {
    await s.close();
  }
});

Deno.test("run() replaces invalid UTF-8 output instead of failing", async () => {
  const s = await setup();
  try {
    const out = await s.run("printf", ["a\\377\\376b"]);
    assert.equal(out.code, "OK");
    assert.equal(out.stdout, "a\uFFFD\uFFFDb");
  } finally {
    await s.close();
  }
});

Deno.test("run() returns EXECUTOR_ERROR when the binary vanished after startup", async () => {
  const s = await setup();
  try {
    const gone = { name: "ghost", path: `${s.jail}/ghost`, realPath: `${s.jail}/ghost` };
    const out = await s.executor.run({
      callId: "1",
      command: gone,
      args: [],
      cwd: s.jail,
      redactor: NO_REDACTION,
    });
    assert.equal(out.code, "EXECUTOR_ERROR");
    assert.match(out.reason, /no longer exists/);
  } finally {
    await s.close();
  }
});

Deno.test("run() returns EXECUTOR_ERROR when the working directory is gone", async () => {
  const s = await setup();
  try {
    const out = await s.run("true", [], { cwd: `${s.jail}/missing` });
    assert.equal(out.code, "EXECUTOR_ERROR");
  } finally {
    await s.close();
  }
});

Deno.test("shutdown() kills running commands and refuses new ones", async () => {
  const s = await setup();
  try {
    const running = s.run("sleep", ["30"]);
    await new Promise((r) => setTimeout(r, 100));
    await s.executor.shutdown();
    const out = await running;
    assert.equal(out.code, "CANCELLED");
    assert.match(out.reason, /shutting down/);
    const late = await s.run("sh", ["-c", "touch canary"]);
    assert.equal(late.code, "CANCELLED");
    await assert.rejects(Deno.stat(`${s.jail}/canary`), Deno.errors.NotFound);
  } finally {
    await s.close();
  }
});

Deno.test("createExecutor() applies per-command hardening (argv prefix and env)", async () => {
  const jail = await makeJail();
  try {
    const policy = makePolicy({ jailRoot: jail, allow: ["sh"] });
    const built = await createExecutor(policy, {
      hardening: (c) =>
        c.name === "sh" ? { prependArgs: ["-c", 'echo "$HARDENED"'], env: { HARDENED: "yes" } } : {
          prependArgs: [],
          env: {},
        },
    });
    assert.ok(built.ok);
    const out = await built.executor.run({
      callId: "1",
      command: policy.allowlist.get("sh")!,
      args: [],
      cwd: jail,
      redactor: NO_REDACTION,
    });
    assert.equal(out.stdout, "yes\n");
    await built.executor.shutdown();
  } finally {
    await Deno.remove(jail, { recursive: true });
  }
});

Deno.test("createExecutor() fails loudly when the launcher is missing", async () => {
  const jail = await makeJail();
  try {
    const policy = makePolicy({ jailRoot: jail });
    const built = await createExecutor(policy, { tools: { spawn: "/nonexistent/htmcp-spawn" } });
    assert.equal(built.ok, false);
    assert.ok(
      !built.ok && /launcher \/nonexistent\/htmcp-spawn is missing/.test(built.message),
      JSON.stringify(built),
    );
  } finally {
    await Deno.remove(jail, { recursive: true });
  }
});

Deno.test("createExecutor() refuses a launcher whose bytes differ from the build's, and runs nothing", async () => {
  const jail = await makeJail();
  const dir = await Deno.makeTempDir();
  try {
    // A copy with one byte appended still runs, but is not the reviewed build.
    const copy = `${dir}/htmcp-spawn`;
    const bytes = await Deno.readFile(DEFAULT_LAUNCHER_TOOLS.spawn);
    await Deno.writeFile(copy, new Uint8Array([...bytes, 0]), { mode: 0o755 });
    const policy = makePolicy({ jailRoot: jail });
    const built = await createExecutor(policy, { tools: { spawn: copy } });
    assert.equal(built.ok, false);
    assert.ok(
      !built.ok && /SHA-256 [0-9a-f]{64}, not the/.test(built.message),
      JSON.stringify(built),
    );
  } finally {
    await Deno.remove(jail, { recursive: true });
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("run() returns CONTAINMENT_UNAVAILABLE and runs nothing when the helper vanishes after startup", async () => {
  const { outcome, canaryCreated } = await runWithToolRemovedAfterStartup("spawn");
  assert.equal(outcome.code, "CONTAINMENT_UNAVAILABLE");
  assert.match(outcome.reason, /launcher .* is missing/);
  assert.equal(outcome.exitCode, null);
  assert.equal(canaryCreated, false);
});

Deno.test("describe() and launcherPaths() name the launcher the server must be allowed to run", async () => {
  const s = await setup();
  try {
    const d = s.executor.describe();
    assert.equal(d.mode, "none");
    assert.equal(d.launcherPath, DEFAULT_LAUNCHER_TOOLS.spawn);
    assert.deepEqual(s.executor.launcherPaths(), [DEFAULT_LAUNCHER_TOOLS.spawn]);
    assert.ok(d.probes.every((p) => p.ok));
    assert.match(d.summary, /THE KERNEL SANDBOX IS OFF/);
  } finally {
    await s.close();
  }
});

Deno.test("run() returns RUNTIME_DENIED when Deno's permissions refuse the launcher", async () => {
  // A child Deno with a run grant for the launcher builds the executor, then gives
  // the grant up: the next spawn is refused by the permission layer.
  const jail = await makeJail();
  try {
    const script = `
      import { createExecutor } from "${new URL("../../src/exec/mod.ts", import.meta.url)}";
      import { createRedactor } from "${new URL("../../src/redact/mod.ts", import.meta.url)}";
      import { makePolicy } from "${new URL("../_helpers/policy.ts", import.meta.url)}";
      const policy = makePolicy({ jailRoot: ${JSON.stringify(jail)}, allow: ["true"] });
      const built = await createExecutor(policy);
      if (!built.ok) { console.log(JSON.stringify({ startup: built.message })); Deno.exit(0); }
      await Deno.permissions.revoke({ name: "run" });
      const out = await built.executor.run({ callId: "1", command: policy.allowlist.get("true"),
        args: [], cwd: policy.jailRoot, redactor: createRedactor({ enabled: false, entropyFallback: false, extraPatterns: [] }) });
      console.log(JSON.stringify(out));
    `;
    const child = await new Deno.Command(Deno.execPath(), {
      args: [
        "eval",
        "--no-prompt",
        "--allow-read",
        `--allow-run=${DEFAULT_LAUNCHER_TOOLS.spawn}`,
        script,
      ],
      stdout: "piped",
      stderr: "piped",
    }).output();
    const text = new TextDecoder().decode(child.stdout).trim();
    const out = JSON.parse(text);
    assert.equal(out.code, "RUNTIME_DENIED", text + new TextDecoder().decode(child.stderr));
    assert.match(out.reason, /permissions refused/);
  } finally {
    await Deno.remove(jail, { recursive: true });
  }
});

Deno.test("createExecutor() with no limit set runs nothing but the helper before the command", async () => {
  const jail = await makeJail();
  try {
    const policy = makePolicy({ jailRoot: jail, overrides: { limits: TEST_LIMITS } });
    const built = await createExecutor(policy);
    assert.ok(built.ok);
    assert.deepEqual(built.executor.describe().chain, [DEFAULT_LAUNCHER_TOOLS.spawn]);
    await built.executor.shutdown();
  } finally {
    await Deno.remove(jail, { recursive: true });
  }
});

Deno.test("createExecutor() refuses mode bwrap when bubblewrap is missing, naming it and the fix", async () => {
  const jail = await makeJail();
  try {
    const policy = makePolicy({
      jailRoot: jail,
      overrides: {
        sandbox: {
          mode: "bwrap",
          network: "none",
          networkAllow: [],
          acceptPathCheckOnly: false,
          user: null,
        },
      },
    });
    const built = await createExecutor(policy, { tools: { bwrap: "/nonexistent/bwrap" } });
    assert.equal(built.ok, false);
    assert.ok(
      !built.ok && /mode = "bwrap".*probe failed.*install bubblewrap/.test(built.message),
      JSON.stringify(built),
    );
  } finally {
    await Deno.remove(jail, { recursive: true });
  }
});

Deno.test("createExecutor() in auto mode refuses to start when bwrap cannot be set up: no fallback", async () => {
  const jail = await makeJail();
  try {
    const policy = makePolicy({
      jailRoot: jail,
      overrides: {
        sandbox: {
          mode: "auto",
          network: "none",
          networkAllow: [],
          acceptPathCheckOnly: false,
          user: null,
        },
      },
    });
    const built = await createExecutor(policy, { tools: { bwrap: "/nonexistent/bwrap" } });
    assert.equal(built.ok, false);
    assert.ok(
      !built.ok &&
        /^Cannot start with \[sandbox\] mode = "auto" \(which means "bwrap"\): the bubblewrap probe failed/
          .test(built.message),
      JSON.stringify(built),
    );
  } finally {
    await Deno.remove(jail, { recursive: true });
  }
});

Deno.test("createExecutor() in auto mode is bwrap: commands run in the sandbox as the jail's owner", async () => {
  const jail = await makeJail();
  try {
    const policy = makePolicy({
      jailRoot: jail,
      allow: ["id"],
      overrides: {
        sandbox: {
          mode: "auto",
          network: "none",
          networkAllow: [],
          acceptPathCheckOnly: false,
          user: null,
        },
      },
    });
    const built = await createExecutor(policy);
    assert.ok(built.ok, built.ok ? "" : built.message);
    const d = built.executor.describe();
    assert.equal(d.requestedMode, "auto");
    assert.equal(d.mode, "bwrap");
    assert.match(d.summary, /kernel sandbox \(\[sandbox\] mode = "auto" \(which means "bwrap"\)\)/);
    const owner = (await Deno.stat(jail)).uid;
    assert.equal(d.commandUid, owner);
    assert.ok(d.chain.includes("/usr/bin/bwrap"));
    const id = await built.executor.run({
      callId: "1",
      command: policy.allowlist.get("id")!,
      args: ["-u"],
      cwd: jail,
      redactor: NO_REDACTION,
    });
    assert.equal(id.stdout, `${owner}\n`);
    await built.executor.shutdown();
  } finally {
    await Deno.remove(jail, { recursive: true });
  }
});

Deno.test("createExecutor() refuses mode none without accept_path_check_only, naming both keys", async () => {
  const jail = await makeJail();
  try {
    const policy = makePolicy({
      jailRoot: jail,
      overrides: {
        sandbox: {
          mode: "none",
          network: "none",
          networkAllow: [],
          acceptPathCheckOnly: false,
          user: null,
        },
      },
    });
    const built = await createExecutor(policy);
    assert.deepEqual(built, {
      ok: false,
      message:
        'Cannot start: Policy key "sandbox.mode" is "none", which runs commands without the kernel sandbox so the jail is only advisory; set [sandbox] accept_path_check_only = true to accept that, or use mode = "bwrap".',
    });
  } finally {
    await Deno.remove(jail, { recursive: true });
  }
});

Deno.test("createExecutor() refuses to start where user namespaces are refused, saying so and the fix", async () => {
  const jail = await makeJail();
  // A stand-in bwrap that fails the way bubblewrap does when the kernel
  // refuses unprivileged user namespaces (it runs through the real chain).
  const tools = await Deno.makeTempDir();
  await Deno.chmod(tools, 0o755);
  const fake = `${tools}/bwrap`;
  await Deno.writeTextFile(
    fake,
    "#!/bin/sh\necho 'bwrap: No permissions to creating new namespace, likely because the kernel does not allow non-privileged user namespaces.' >&2\nexit 1\n",
  );
  await Deno.chmod(fake, 0o755);
  try {
    const policy = makePolicy({
      jailRoot: jail,
      overrides: {
        sandbox: {
          mode: "bwrap",
          network: "none",
          networkAllow: [],
          acceptPathCheckOnly: false,
          user: null,
        },
      },
    });
    const built = await createExecutor(policy, { tools: { bwrap: fake } });
    assert.equal(built.ok, false);
    assert.ok(
      !built.ok &&
        /^Cannot start with \[sandbox\] mode = "bwrap": this system does not let uid \d+ create user namespaces, which the kernel sandbox needs \(bwrap: No permissions .*\); enable unprivileged user namespaces/
          .test(built.message),
      JSON.stringify(built),
    );
  } finally {
    await Deno.remove(jail, { recursive: true });
    await Deno.remove(tools, { recursive: true });
  }
});
