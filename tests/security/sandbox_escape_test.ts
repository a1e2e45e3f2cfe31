/**
 * The kernel sandbox ([sandbox] mode = "bwrap"): what a command that the
 * policy allowed still cannot do, because the kernel refuses it. Each case
 * runs the attack for real, asserts it failed, and where the attack would
 * leave a trace on the host (a file, a connection) asserts the trace is
 * absent. The same attack under mode "none" succeeds, which proves each test
 * can fail.
 */
import { exists } from "../_helpers/exists.ts";
import assert from "node:assert/strict";
import { join } from "node:path";
import { runWithToolRemovedAfterStartup, type Setup, setup } from "../exec/_fixtures.ts";
import { assertSandboxMode } from "../_helpers/jail.ts";

async function sandboxed(
  fn: (s: Setup) => Promise<void>,
  network: "none" | "host" = "none",
): Promise<void> {
  const s = await setup({ mode: "bwrap", network });
  try {
    await assertSandboxMode(s.executor, "bwrap");
    await fn(s);
  } finally {
    await s.close();
  }
}

Deno.test("sandbox: commands run as the jail's owner, never root, with no capabilities", async () => {
  await sandboxed(async (s) => {
    const owner = (await Deno.stat(s.jail)).uid;
    assert.notEqual(owner, 0, "precondition: the fixture's jail is not root's");
    const id = await s.run("id", ["-u"]);
    assert.equal(id.stdout, `${owner}\n`);
    const caps = await s.run("sh", ["-c", "grep -E '^Cap(Eff|Prm|Bnd)' /proc/self/status"]);
    assert.match(caps.stdout, /CapEff:\t0000000000000000/);
    assert.match(caps.stdout, /CapBnd:\t0000000000000000/);
  });
});

Deno.test("sandbox: cat /etc/shadow fails although the host has one", async () => {
  assert.ok(await exists("/etc/shadow"), "precondition: the host has /etc/shadow");
  await sandboxed(async (s) => {
    const out = await s.run("cat", ["/etc/shadow"]);
    assert.equal(out.code, "OK");
    assert.notEqual(out.exitCode, 0);
    assert.equal(out.stdout, "");
  });
});

Deno.test("sandbox: the operator's home (/root) and /home are not there", async () => {
  assert.ok(await exists("/root"), "precondition: the host has /root");
  await sandboxed(async (s) => {
    const out = await s.run("ls", ["-a", "/root", "/home"]);
    assert.notEqual(out.exitCode, 0);
    assert.match(out.stderr, /No such file or directory/);
    assert.equal(out.stdout, "");
  });
});

Deno.test("sandbox: writing outside the jail fails and leaves nothing on the host", async () => {
  const canary = `htmcp-canary-${crypto.randomUUID()}`;
  // Host-side canaries only where the command's uid could write without the
  // sandbox (/tmp and /var/tmp are 1777): a canary in /usr or /etc would be
  // absent because of their modes alone and prove nothing.
  const writable = [`/tmp/${canary}`, `/var/tmp/${canary}`];
  // For those, the error from inside is the proof that the read-only bind,
  // not a mode, refused the write.
  const readOnly = [`/usr/${canary}`, `/etc/${canary}`];
  await sandboxed(async (s) => {
    const script = [...writable, ...readOnly].map((t) => `echo x > ${t}`).join("; ") +
      "; echo inside > ok";
    const out = await s.run("sh", ["-c", script]);
    assert.equal(out.code, "OK");
    for (const t of writable) assert.equal(await exists(t), false, t);
    for (const t of readOnly) {
      assert.ok(out.stderr.includes(`${t}: Read-only file system`), `${t}: ${out.stderr}`);
    }
    // The jail itself is writable: the refusal is specific.
    assert.equal(await Deno.readTextFile(join(s.jail, "ok")), "inside\n");
  });
  // Control: without the sandbox the same command's writes land on the host.
  const plain = await setup({ mode: "none" });
  try {
    await plain.run("sh", ["-c", writable.map((t) => `echo x > ${t}`).join("; ")]);
    for (const t of writable) assert.equal(await exists(t), true, t);
  } finally {
    for (const t of writable) await Deno.remove(t).catch(() => {});
    await plain.close();
  }
});

Deno.test("sandbox: a symlink out of the jail, created after our checks, leads nowhere", async () => {
  // A world-readable file outside the jail: only the sandbox stands between it and the command.
  const outside = await Deno.makeTempDir({ prefix: "htmcp-outside-" });
  await Deno.chmod(outside, 0o755);
  await Deno.writeTextFile(join(outside, "secret.txt"), "host secret\n");
  await Deno.chmod(join(outside, "secret.txt"), 0o644);
  try {
    await sandboxed(async (s) => {
      // The command plants the link itself, so no path check before the run saw it.
      const script = `ln -s ${outside}/secret.txt late && cat late; ln -s /etc/shadow sh && cat sh`;
      const out = await s.run("sh", ["-c", script]);
      assert.ok(!out.stdout.includes("host secret"), out.stdout);
      assert.match(out.stderr, /No such file or directory/);
      // A link planted before the run (by an earlier command) fares no better.
      await Deno.symlink(join(outside, "secret.txt"), join(s.jail, "early"));
      const early = await s.run("cat", ["early"]);
      assert.notEqual(early.exitCode, 0);
      assert.equal(early.stdout, "");
    });
    const plain = await setup({ mode: "none" });
    try {
      const control = await plain.run("cat", [join(outside, "secret.txt")]);
      assert.equal(control.stdout, "host secret\n");
    } finally {
      await plain.close();
    }
  } finally {
    await Deno.remove(outside, { recursive: true });
  }
});

async function connectAttempt(s: Setup, port: number) {
  return await s.run("bash", ["-c", `echo hello > /dev/tcp/127.0.0.1/${port}`]);
}

Deno.test("sandbox: a TCP connection to a host service on 127.0.0.1 fails", async () => {
  const listener = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  const port = (listener.addr as Deno.NetAddr).port;
  let accepted = 0;
  const accepting = (async () => {
    for await (const conn of listener) {
      accepted++;
      conn.close();
    }
  })();
  try {
    await sandboxed(async (s) => {
      const out = await connectAttempt(s, port);
      assert.notEqual(out.exitCode, 0);
      assert.equal(accepted, 0);
    });
    // Control: without the sandbox the same command connects.
    const plain = await setup({ mode: "none" });
    try {
      const out = await connectAttempt(plain, port);
      assert.equal(out.exitCode, 0);
      for (let i = 0; i < 50 && accepted === 0; i++) await new Promise((r) => setTimeout(r, 10));
      assert.equal(accepted, 1);
    } finally {
      await plain.close();
    }
  } finally {
    listener.close();
    await accepting;
  }
});

Deno.test('sandbox: [sandbox] network = "host" keeps the host network', async () => {
  const listener = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  const port = (listener.addr as Deno.NetAddr).port;
  const accepting = (async () => {
    for await (const conn of listener) conn.close();
  })();
  try {
    await sandboxed(async (s) => {
      const out = await connectAttempt(s, port);
      assert.equal(out.exitCode, 0, out.stderr);
    }, "host");
  } finally {
    listener.close();
    await accepting;
  }
});

Deno.test("sandbox: the server's processes are invisible", async () => {
  await sandboxed(async (s) => {
    const out = await s.run("sh", ["-c", "ls /proc | grep -E '^[0-9]+$' | tr '\\n' ' '"]);
    const pids = out.stdout.trim().split(/\s+/).map(Number);
    // Only the namespace's own: its init, the shell, ls and the pipeline.
    assert.ok(pids.length <= 6, out.stdout);
    assert.ok(pids.every((p) => p < 20), out.stdout);
    const server = await s.run("sh", ["-c", `kill -0 ${Deno.pid}`]);
    assert.notEqual(server.exitCode, 0);
    // pid 1 is the sandbox's own init: the inner helper bound into it
    // (bwrap's --as-pid-1), not a process of the host or of the server.
    const init = await s.run("cat", ["/proc/1/cmdline"]);
    assert.equal(init.stdout.replaceAll("\0", " "), "/dev/.htmcp-spawn --inner --request ");
  });
});

Deno.test("sandbox: the hostname is the sandbox's own (UTS namespace)", async () => {
  await sandboxed(async (s) => {
    const out = await s.run("cat", ["/proc/sys/kernel/hostname"]);
    assert.equal(out.stdout, "htmcp-sandbox\n");
  });
});

Deno.test("sandbox: the environment is exactly the policy's (the working folder comes with the request, no PWD)", async () => {
  Deno.env.set("HTMCP_TEST_SECRET", "must-not-leak");
  try {
    await sandboxed(async (s) => {
      const out = await s.run("env", []);
      const lines = out.stdout.trim().split("\n");
      const names = lines.map((l) => l.split("=")[0]).sort();
      assert.deepEqual(names, Object.keys(s.policy.childEnv).sort());
      // bwrap's own variables never reach the command (it ran in the C locale).
      assert.ok(!names.includes("PWD") && !names.includes("LC_ALL"));
      assert.ok(!out.stdout.includes("must-not-leak"));
    });
  } finally {
    Deno.env.delete("HTMCP_TEST_SECRET");
  }
});

Deno.test("sandbox: no controlling terminal (TIOCSTI cannot reach the operator's tty)", async () => {
  await sandboxed(async (s) => {
    const out = await s.run("sh", ["-c", "exec 3</dev/tty"]);
    assert.notEqual(out.exitCode, 0);
  });
});

Deno.test("sandbox: the /etc files are the host's, copied in read-only, and the sandbox's own root cannot be written", async () => {
  const hostHosts = await Deno.readTextFile("/etc/hosts");
  const hostPasswd = await Deno.readTextFile("/etc/passwd");
  await sandboxed(async (s) => {
    const read = await s.run("cat", ["/etc/hosts", "/etc/passwd"]);
    assert.equal(read.exitCode, 0);
    assert.equal(read.stdout, hostHosts + hostPasswd);
    // The copy is a file of the sandbox's own root, so its owner is the
    // command's uid: only the read-only root keeps it from being rewritten.
    const attempts = [
      "echo 127.0.0.9 evil >> /etc/hosts",
      "touch /etc/new",
      "mkdir /planted",
      "ln -s /proc /link",
    ];
    for (const attempt of attempts) {
      const out = await s.run("sh", ["-c", attempt]);
      assert.notEqual(out.exitCode, 0, attempt);
      assert.match(
        out.stderr,
        /Read-only file system|Permission denied/,
        `${attempt}: ${out.stderr}`,
      );
    }
    // Its owner could chmod it on a writable root.
    const chmod = await s.run("sh", ["-c", "chmod 666 /etc/passwd"]);
    assert.match(chmod.stderr, /Read-only file system/);
    const after = await s.run("sh", ["-c", "cat /etc/hosts; ls -A /; stat -c %a /etc/passwd"]);
    assert.equal(after.stdout.startsWith(hostHosts), true);
    assert.ok(!/planted|link|new/.test(after.stdout), after.stdout);
    assert.match(after.stdout, /\n444\n$/);
    // The jail, /tmp and /dev/shm stay writable: the refusal is specific.
    const writes = await s.run("sh", [
      "-c",
      "echo j > ok && echo t > /tmp/t && echo d > /dev/shm/d",
    ]);
    assert.equal(writes.exitCode, 0, writes.stderr);
    assert.equal(await Deno.readTextFile(join(s.jail, "ok")), "j\n");
  });
  // Nothing reached the host.
  assert.equal(await Deno.readTextFile("/etc/hosts"), hostHosts);
  assert.equal(await exists("/planted"), false);
});

Deno.test("sandbox: /dev holds plain device nodes only: no tty, no pseudo-terminal to open", async () => {
  await sandboxed(async (s) => {
    const list = await s.run("ls", ["-A", "/dev"]);
    const names = list.stdout.trim().split("\n").filter((name) => !name.startsWith(".htmcp-"));
    assert.deepEqual(names.sort(), [
      "fd",
      "full",
      "null",
      "random",
      "shm",
      "stderr",
      "stdin",
      "stdout",
      "urandom",
      "zero",
    ]);
    const pty = await s.run("sh", ["-c", "exec 3</dev/ptmx"]);
    assert.notEqual(pty.exitCode, 0);
    assert.match(pty.stderr, /No such file|nonexistent/);
    const devices = await s.run("sh", [
      "-c",
      "head -c 4 /dev/zero | od -An -tx1; head -c 8 /dev/urandom | wc -c; echo gone > /dev/null",
    ]);
    assert.equal(devices.exitCode, 0, devices.stderr);
    assert.equal(devices.stdout, " 00 00 00 00\n8\n");
  });
});

Deno.test("mode none: a root server's commands still drop to the jail's owner, with no capabilities", async () => {
  const plain = await setup({ mode: "none" });
  try {
    await assertSandboxMode(plain.executor, "none");
    const owner = (await Deno.stat(plain.jail)).uid;
    const id = await plain.run("id", ["-u"]);
    assert.equal(id.stdout, `${owner}\n`);
    assert.notEqual(id.stdout, "0\n");
    const caps = await plain.run("sh", ["-c", "grep -E '^Cap(Eff|Prm|Amb)' /proc/self/status"]);
    assert.match(caps.stdout, /CapEff:\t0000000000000000/);
    assert.match(caps.stdout, /CapPrm:\t0000000000000000/);
    assert.match(caps.stdout, /CapAmb:\t0000000000000000/);
    // Root's own 0600 files are out of reach by ownership, too.
    const shadow = await plain.run("cat", ["/etc/shadow"]);
    assert.notEqual(shadow.exitCode, 0);
    assert.equal(shadow.stdout, "");
  } finally {
    await plain.close();
  }
});

Deno.test("sandbox: bwrap gone after startup makes the call CONTAINMENT_UNAVAILABLE, never an unsandboxed run", async () => {
  const { outcome, canaryCreated } = await runWithToolRemovedAfterStartup("bwrap");
  assert.equal(outcome.code, "CONTAINMENT_UNAVAILABLE", JSON.stringify(outcome));
  assert.equal(outcome.exitCode, null);
  assert.equal(canaryCreated, false);
});
