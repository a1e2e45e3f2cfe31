/**
 * Full-control mode through the real server and the real MCP client: bash
 * text runs in the kernel sandbox, and from inside it the host's secrets,
 * home, files outside the jail, processes and (with network none) any
 * connection stay out of reach; denylisted first words are still refused,
 * with nothing run; and without the sandbox the server does not start.
 */
import assert from "node:assert/strict";
import { exists, type Harness, startHarness } from "../_helpers/stdio_harness.ts";
import { assertSandboxMode, openCanary } from "../_helpers/jail.ts";

const FULL_CONTROL = 'network = "none"\n[mode]\nfull_control = true\n';

async function withFullControl(fn: (h: Harness) => Promise<void>): Promise<void> {
  const h = await startHarness({ extraToml: FULL_CONTROL, files: { "keep.txt": "keep\n" } });
  try {
    await assertSandboxMode(h, "bwrap");
    await fn(h);
  } finally {
    await h.close();
  }
}

async function attemptFor(h: Harness, command: string): Promise<Record<string, unknown>> {
  const found = (await h.records()).find((r) =>
    r["kind"] === "attempt" && r["command_raw"] === command
  );
  assert.ok(found, `no attempt record for ${command}`);
  return found;
}

Deno.test("full control: a bash loop with a redirection runs in the jail, audited as the bash -c argv that ran", async () => {
  await withFullControl(async (h) => {
    const described = await h.describePolicy();
    assert.equal(described["full_control"], true);
    const command = "for i in 1 2 3; do echo $i; done > out.txt";
    const result = await h.call("run_command", { command });
    assert.equal(result.code, "OK", result.policy_reason);
    assert.equal(await Deno.readTextFile(`${h.jail}/out.txt`), "1\n2\n3\n");
    const attempt = await attemptFor(h, command);
    const argv = attempt["argv"] as string[];
    assert.match(argv[0] ?? "", /\/bash$/);
    assert.deepEqual(argv.slice(1), ["-c", command]);
    assert.equal(attempt["verdict"], "allow");
    const tools = await h.client.listTools();
    const run = tools.tools.find((tool) => tool.name === "run_command");
    assert.equal(run?.annotations?.destructiveHint, true);
    assert.equal(run?.annotations?.openWorldHint, false);
  });
});

Deno.test("full control: /etc/shadow cannot be read from inside the sandbox", async () => {
  assert.ok(await exists("/etc/shadow"), "the host has an /etc/shadow to hide");
  await withFullControl(async (h) => {
    const result = await h.call("run_command", { command: "cat /etc/shadow" });
    assert.equal(result.code, "OK");
    assert.notEqual(result.exit_code, 0);
    assert.equal(result.stdout, "");
    assert.match(result.stderr, /No such file/);
  });
});

Deno.test("full control: the operator's home, /root and /home are not visible; HOME is the jail", async () => {
  await withFullControl(async (h) => {
    // The harness gives the server HOME = its temp folder, outside the jail.
    const canary = `${h.dir}/home-canary.txt`;
    await Deno.writeTextFile(canary, "CANARY-HOME-SECRET\n");
    const result = await h.call("run_command", {
      command: `echo "home=$HOME"; cat ${canary}; ls /root; ls /home; ls ${h.dir}`,
    });
    assert.equal(result.code, "OK");
    assert.ok(!result.stdout.includes("CANARY-HOME-SECRET"), result.stdout);
    assert.ok(result.stdout.includes(`home=${h.jail}\n`), result.stdout);
    assert.match(result.stderr, /home-canary\.txt: No such file/);
    assert.match(result.stderr, /cannot access '\/root'/);
    assert.match(result.stderr, /cannot access '\/home'/);
  });
});

Deno.test("full control: nothing outside the jail can be written", async () => {
  await withFullControl(async (h) => {
    // The outside canary's folder is open to everyone, so the command's uid
    // could write it if the sandbox showed it: only the sandbox keeps it out
    // (the harness's own folder is closed to that uid and would prove nothing).
    const outside = await openCanary(h.dir, "outside-canary.txt", "untouched\n");
    const tmpName = `/tmp/htmcp-full-control-${crypto.randomUUID()}`;
    const result = await h.call("run_command", {
      command:
        `echo x > ${outside}; echo y > /usr/htmcp-canary; echo z > /etc/htmcp-canary; echo t > ${tmpName}; cat ${tmpName}`,
    });
    assert.equal(result.code, "OK");
    assert.equal(
      await Deno.readTextFile(outside),
      "untouched\n",
      "a file outside the jail changed",
    );
    assert.match(
      result.stderr,
      /outside-canary\.txt: No such file or directory/,
      "not even visible",
    );
    // /usr and /etc are closed to the command's uid by their modes as well,
    // so a host-side canary there proves nothing: the error from inside
    // says it is the read-only bind that refused.
    assert.match(result.stderr, /\/usr\/htmcp-canary: Read-only file system/);
    assert.match(result.stderr, /\/etc\/htmcp-canary: Read-only file system/);
    // /tmp inside is a private tmpfs: the write works there and never reaches the host.
    assert.equal(result.stdout, "t\n");
    assert.ok(!(await exists(tmpName)), "the sandbox's /tmp reached the host's");
  });
});

Deno.test("full control: the server's processes are invisible from inside", async () => {
  await withFullControl(async (h) => {
    const result = await h.call("run_command", {
      command: "ls /proc | grep -E '^[0-9]+$' | tr '\\n' ' '; echo; ps -e -o pid=,args=",
    });
    assert.equal(result.code, "OK", result.stderr);
    const [pidLine = "", ...rows] = result.stdout.split("\n").map((line) => line.trim());
    const pids = pidLine.split(/\s+/).map(Number);
    assert.ok(pids.length > 0 && pids.every((pid) => pid < 32), `host pids seen: ${pidLine}`);
    // pid 1 is the sandbox's own init, the inner helper bound into it
    // (bwrap's --as-pid-1); nothing else of ours, and nothing of the server.
    assert.equal(rows[0], "1 /dev/.htmcp-spawn --inner --request", rows.join(","));
    const others = rows.slice(1).filter((row) => row !== "");
    assert.ok(!others.some((row) => /deno|htmcp/.test(row)), others.join(","));
  });
});

Deno.test("full control: with network none no connection leaves the sandbox, not even to host loopback", async () => {
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
    await withFullControl(async (h) => {
      const result = await h.call("run_command", {
        command: `(exec 3<>/dev/tcp/127.0.0.1/${port}) && echo tcp-connected; ` +
          `curl -sS --max-time 3 http://127.0.0.1:${port}/ && echo curl-connected; ` +
          `getent hosts example.com || echo no-dns`,
      });
      assert.equal(result.code, "OK");
      assert.ok(!result.stdout.includes("connected"), result.stdout);
      assert.match(result.stdout, /no-dns/);
      assert.match(result.stderr, /Connection refused|Network is unreachable/);
    });
    assert.equal(accepted, 0, "the host listener was reached");
  } finally {
    listener.close();
    await accepting;
  }
});

Deno.test("full control: a denylisted first word anywhere is refused with POLICY_DENIED, nothing runs, and it is audited", async () => {
  await withFullControl(async (h) => {
    const attempts = [
      "echo start > started.txt; rm -f keep.txt",
      "echo $(sudo id) > started.txt",
      "true && env FOO=1 /usr/bin/rm keep.txt",
      "c=rm; $c keep.txt",
      "bash -c 'echo hi > started.txt; dd if=keep.txt of=started.txt'",
    ];
    for (const command of attempts) {
      const result = await h.call("run_command", { command });
      assert.equal(result.code, "POLICY_DENIED", `${command}: ${result.policy_reason}`);
      assert.equal(result.exit_code, null);
      const attempt = await attemptFor(h, command);
      assert.equal(attempt["verdict"], "deny");
      assert.equal(attempt["code"], "POLICY_DENIED");
    }
    assert.equal(await Deno.readTextFile(`${h.jail}/keep.txt`), "keep\n");
    assert.ok(!(await exists(`${h.jail}/started.txt`)), "part of a refused command ran");
    const records = await h.records();
    assert.ok(!records.some((r) => r["kind"] === "outcome" && r["code"] === "POLICY_DENIED"));
  });
});

Deno.test("full control: the server refuses to start without the kernel sandbox", async () => {
  await assert.rejects(
    startHarness({ sandbox: "none", extraToml: "[mode]\nfull_control = true\n" }),
    (error: Error) => {
      assert.match(
        error.message,
        /Policy key "mode\.full_control" is true, which runs shell strings with bash, and that is only allowed inside the kernel sandbox; \[sandbox\] mode is "none", so the server refuses to start/,
      );
      return true;
    },
  );
});
