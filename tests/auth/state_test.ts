/**
 * `state_dir`: created 0700; the JWT secret created 0600, atomically (racing
 * creators agree), and refused when short, shared or a symlink.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { ensureStateDir, loadOrCreateSecret, MIN_SECRET_BYTES } from "../../src/auth/state/mod.ts";
import { makeAuth } from "./_fixtures.ts";

async function withTemp(fn: (dir: string) => Promise<void>): Promise<void> {
  const dir = await Deno.makeTempDir({ prefix: "htmcp-state-" });
  try {
    await fn(dir);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
}

/**
 * Runs ensureStateDir(stateDir) in a child whose umask is 000, and has it make
 * `control` with mkdir's default mode too (0777 minus the umask). The suite
 * runs without --allow-sys, which Deno.umask() needs, so the shell sets the
 * umask; the control folder proves it was in force.
 */
async function ensureStateDirUnderUmask000(dir: string, stateDir: string, control: string) {
  const stateMod = new URL("../../src/auth/state/mod.ts", import.meta.url).href;
  const script = `
    import { ensureStateDir } from ${JSON.stringify(stateMod)};
    const result = await ensureStateDir(${JSON.stringify(stateDir)});
    await Deno.mkdir(${JSON.stringify(control)});
    console.log(JSON.stringify(result));
  `;
  const child = new Deno.Command("/bin/sh", {
    args: [
      "-c",
      'umask 000 && exec "$0" "$@"',
      Deno.execPath(),
      "run",
      "--quiet",
      `--allow-read=${dir}`,
      `--allow-write=${dir}`,
      "-",
    ],
    stdin: "piped",
    stdout: "piped",
    stderr: "piped",
  }).spawn();
  const writer = child.stdin.getWriter();
  await writer.write(new TextEncoder().encode(script));
  await writer.close();
  const out = await child.output();
  const stderr = new TextDecoder().decode(out.stderr);
  assert.equal(out.code, 0, stderr);
  return JSON.parse(new TextDecoder().decode(out.stdout));
}

Deno.test("a missing state_dir is created 0700 and the secret 0600 with 32 random bytes", async () => {
  await withTemp(async (dir) => {
    const stateDir = join(dir, "nested", "state");
    const control = join(dir, "umask-control");
    // Even with a permissive umask.
    const created = await ensureStateDirUnderUmask000(dir, stateDir, control);
    assert.deepEqual(created, { ok: true });
    assert.equal((await Deno.stat(control)).mode! & 0o777, 0o777, "the child's umask was 000");
    assert.equal((await Deno.stat(stateDir)).mode! & 0o777, 0o700);
    const first = await loadOrCreateSecret(stateDir);
    assert.ok(first.ok && first.created);
    const info = await Deno.stat(join(stateDir, "oauth-jwt-secret"));
    assert.equal(info.mode! & 0o777, 0o600);
    assert.equal(info.size, MIN_SECRET_BYTES);
    const second = await loadOrCreateSecret(stateDir);
    assert.ok(second.ok && !second.created);
    assert.deepEqual(second.key, first.key);
    // No temporary files are left behind.
    const names = [];
    for await (const entry of Deno.readDir(stateDir)) names.push(entry.name);
    assert.deepEqual(names, ["oauth-jwt-secret"]);
  });
});

Deno.test("concurrent creators in one process all get the same secret", async () => {
  await withTemp(async (dir) => {
    const results = await Promise.all(Array.from({ length: 8 }, () => loadOrCreateSecret(dir)));
    const keys = results.map((r) => (r.ok ? btoa(String.fromCharCode(...r.key)) : r.message));
    assert.equal(new Set(keys).size, 1, keys.join("\n"));
    assert.equal(results.filter((r) => r.ok && r.created).length, 1);
  });
});

Deno.test("four processes starting together agree on one secret", async () => {
  await withTemp(async (dir) => {
    const child = fileURLToPath(new URL("./_secret_race_child.ts", import.meta.url));
    const start = Date.now() + 1000;
    const runs = Array.from({ length: 4 }, () =>
      new Deno.Command(Deno.execPath(), {
        args: [
          "run",
          "--quiet",
          `--allow-read=${dir}`,
          `--allow-write=${dir}`,
          child,
          dir,
          String(start),
        ],
        stdout: "piped",
        stderr: "piped",
      }).output());
    const outputs = await Promise.all(runs);
    const lines = outputs.map((o) => new TextDecoder().decode(o.stdout).trim());
    for (const [i, o] of outputs.entries()) {
      assert.equal(o.code, 0, `${lines[i]} ${new TextDecoder().decode(o.stderr)}`);
    }
    const hashes = new Set(lines.map((l) => l.split(" ")[1]));
    assert.equal(hashes.size, 1, lines.join("\n"));
    assert.equal(lines.filter((l) => l.startsWith("created")).length, 1, lines.join("\n"));
    const onDisk = await Deno.readFile(join(dir, "oauth-jwt-secret"));
    const { createHash } = await import("node:crypto");
    assert.ok(hashes.has(createHash("sha256").update(onDisk).digest("hex")));
  });
});

Deno.test("an existing secret shorter than 32 bytes is refused, not replaced", async () => {
  await withTemp(async (dir) => {
    const path = join(dir, "oauth-jwt-secret");
    await Deno.writeTextFile(path, "too-short-secret", { mode: 0o600 });
    const result = await loadOrCreateSecret(dir);
    assert.equal(result.ok, false);
    if (!result.ok) assert.match(result.message, /is 16 bytes; it must have at least 32/);
    assert.equal(await Deno.readTextFile(path), "too-short-secret");
    // And the server refuses to start on it.
    const fixtureDir = await Deno.makeTempDir({ prefix: "htmcp-auth-" });
    try {
      await Deno.mkdir(join(fixtureDir, "state"), { mode: 0o700 });
      await Deno.writeTextFile(join(fixtureDir, "state", "oauth-jwt-secret"), "short", {
        mode: 0o600,
      });
      await assert.rejects(makeAuth({ dir: fixtureDir }), /at least 32/);
    } finally {
      await Deno.remove(fixtureDir, { recursive: true });
    }
  });
});

Deno.test("a secret readable by others, a symlinked secret and a shared state_dir are refused", async () => {
  await withTemp(async (dir) => {
    const path = join(dir, "oauth-jwt-secret");
    await Deno.writeFile(path, crypto.getRandomValues(new Uint8Array(32)));
    await Deno.chmod(path, 0o644);
    const shared = await loadOrCreateSecret(dir);
    assert.equal(shared.ok, false);
    if (!shared.ok) assert.match(shared.message, /readable by other users/);

    await Deno.remove(path);
    const target = join(dir, "elsewhere");
    await Deno.writeFile(target, crypto.getRandomValues(new Uint8Array(32)), { mode: 0o600 });
    await Deno.symlink(target, path);
    const linked = await loadOrCreateSecret(dir);
    assert.equal(linked.ok, false);
    if (!linked.ok) assert.match(linked.message, /not a regular file/);

    const open = join(dir, "open-state");
    await Deno.mkdir(open);
    await Deno.chmod(open, 0o777);
    const result = await ensureStateDir(open);
    assert.equal(result.ok, false);
    if (!result.ok) assert.match(result.message, /writable by other users/);
    const file = join(dir, "a-file");
    await Deno.writeTextFile(file, "");
    assert.equal((await ensureStateDir(file)).ok, false);
  });
});

Deno.test("createAuthorizationServer() refuses to start without a state directory", async () => {
  const { createAuthorizationServer } = await import("../../src/auth/mod.ts");
  const { makePolicy } = await import("../_helpers/policy.ts");
  await withTemp(async (dir) => {
    const result = await createAuthorizationServer({
      policy: makePolicy({ jailRoot: dir }),
      baseUrl: "http://127.0.0.1:8931",
      audit: { writeEvent: () => Promise.resolve({ ok: true, seq: 0 }) },
      stateDir: null as unknown as string,
      adminPin: null,
    });
    assert.deepEqual(result, {
      ok: false,
      message: 'OAuth needs a state directory: set "state_dir" in the policy or HTMCP_STATE_DIR.',
    });
  });
});
