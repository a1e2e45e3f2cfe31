/**
 * `--copy-in`: the files the namespace's init opens for bwrap's `--file`
 * copies of `/etc`. The helper runs for real, as a call of a serving helper,
 * here without bwrap: its init executes `cat /proc/self/fd/N` instead, which
 * reads exactly what bwrap would copy from that descriptor.
 */
import assert from "node:assert/strict";
import { FIRST_COPY_FD } from "../../src/sandbox/mod.ts";
import { exists } from "../_helpers/exists.ts";
import { helperCall } from "./_fixtures.ts";

const decode = (bytes: Uint8Array) => new TextDecoder().decode(bytes);

// The suite has no sys permission for Deno.uid(): ask id(1).
const ROOT = decode((await new Deno.Command("id", { args: ["-u"] }).output()).stdout).trim() ===
  "0";
/** A root server drops its commands (and so the copies' opening) to an unprivileged uid. */
const DROP = ["--pidns=root", "--setuid=65534", "--setgid=65534"];

Deno.test({
  name: "--copy-in opens each file at the next descriptor from FIRST_COPY_FD, in order",
  ignore: !ROOT,
  fn: async () => {
    const fds = [0, 1].map((i) => `/proc/self/fd/${FIRST_COPY_FD + i}`);
    const out = await helperCall(
      [...DROP, "--init-exec", "--copy-in=/etc/hosts", "--copy-in=/etc/passwd"],
      ["/usr/bin/cat", ...fds],
    );
    assert.equal(out.code, 0, out.stderr);
    assert.equal(
      out.stdout,
      (await Deno.readTextFile("/etc/hosts")) + (await Deno.readTextFile("/etc/passwd")),
    );
  },
});

Deno.test({
  name:
    "--copy-in opens as the command's uid: a file it cannot read stops the call (125), nothing runs",
  ignore: !ROOT,
  fn: async () => {
    assert.ok(await exists("/etc/shadow"), "precondition: the host has /etc/shadow");
    const dir = await Deno.makeTempDir({ prefix: "htmcp-copy-in-" });
    try {
      await Deno.chmod(dir, 0o777);
      const canary = `${dir}/canary`;
      const out = await helperCall(
        [...DROP, "--init-exec", "--copy-in=/etc/shadow"],
        ["/usr/bin/touch", canary],
      );
      assert.equal(out.code, 125);
      assert.equal(out.stderr, "htmcp-spawn: /etc/shadow: Permission denied\n");
      assert.equal(await exists(canary), false);
      // The same call without the unreadable copy runs: the refusal is the copy's.
      const ran = await helperCall([...DROP, "--init-exec"], ["/usr/bin/touch", canary]);
      assert.equal(ran.code, 0, ran.stderr);
      assert.equal(await exists(canary), true);
    } finally {
      await Deno.remove(dir, { recursive: true });
    }
  },
});

Deno.test({
  name: "--copy-in of a file missing on the host gives an empty copy",
  ignore: !ROOT,
  fn: async () => {
    const missing = `/etc/htmcp-missing-${crypto.randomUUID()}`;
    const out = await helperCall(
      [...DROP, "--init-exec", `--copy-in=${missing}`],
      ["/usr/bin/wc", "-c", `/proc/self/fd/${FIRST_COPY_FD}`],
    );
    assert.equal(out.code, 0, out.stderr);
    assert.match(out.stdout, /^0 /);
  },
});

Deno.test("--copy-in is refused without --init-exec, and for a relative path: 125, nothing runs", async () => {
  const pidns = ROOT ? "--pidns=root" : "--pidns=user";
  const dir = await Deno.makeTempDir({ prefix: "htmcp-copy-in-" });
  try {
    const canary = `${dir}/canary`;
    const alone = await helperCall([pidns, "--copy-in=/etc/hosts"], ["/usr/bin/touch", canary]);
    assert.equal(alone.code, 125);
    assert.match(alone.stderr, /^htmcp-spawn: --copy-in without --init-exec: /);
    const relative = await helperCall([pidns, "--init-exec", "--copy-in=etc/hosts"], [
      "/usr/bin/touch",
      canary,
    ]);
    assert.equal(relative.code, 125);
    assert.match(relative.stderr, /^htmcp-spawn: --copy-in: /);
    assert.equal(await exists(canary), false);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("--go with --init-exec is refused: 125, nothing runs (a sandbox's go is its request)", async () => {
  const pidns = ROOT ? "--pidns=root" : "--pidns=user";
  const dir = await Deno.makeTempDir({ prefix: "htmcp-copy-in-" });
  try {
    const canary = `${dir}/canary`;
    for (const go of ["--go", "--go-null"]) {
      const out = await helperCall([pidns, "--init-exec", go], ["/usr/bin/touch", canary]);
      assert.equal(out.code, 125, go);
      assert.match(out.stderr, /^htmcp-spawn: --go with --init-exec /);
    }
    assert.equal(await exists(canary), false);
    // Without the go the same start runs: the refusal is of the combination.
    assert.equal((await helperCall([pidns, "--init-exec"], ["/usr/bin/touch", canary])).code, 0);
    assert.equal(await exists(canary), true);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});
