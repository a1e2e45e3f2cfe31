/**
 * Kernel resource limits ([limits] cpu_seconds, address_space_bytes,
 * max_processes, file_size_bytes, open_files): each is enforced on the
 * command by the kernel, and each test has a control run that the limit
 * does not touch, so it cannot pass vacuously.
 */
import assert from "node:assert/strict";
import type { Limits, SandboxMode } from "../../src/config/types.ts";
import { type Setup, setup } from "../exec/_fixtures.ts";

const ALLOW = ["sh", "bash", "dd", "sleep"];

async function limited(
  mode: SandboxMode,
  limits: Partial<Limits>,
  fn: (s: Setup) => Promise<void>,
): Promise<void> {
  const s = await setup({ mode, limits, allow: ALLOW });
  try {
    await fn(s);
  } finally {
    await s.close();
  }
}

for (const mode of ["none", "bwrap"] as const) {
  Deno.test(`[${mode}] cpu_seconds ends a busy loop with SIGXCPU long before the timeout`, async () => {
    await limited(mode, { cpuSeconds: 1, timeoutMs: 8_000 }, async (s) => {
      const out = await s.run("sh", ["-c", "while :; do :; done"]);
      assert.equal(out.code, "OK");
      assert.equal(out.exitCode, 128 + 24); // SIGXCPU, reported as a shell would
      assert.ok(out.durationMs < 5_000, String(out.durationMs));
    });
  });

  Deno.test(`[${mode}] address_space_bytes refuses an allocation above it`, async () => {
    await limited(mode, { addressSpaceBytes: 64 * 1024 * 1024 }, async (s) => {
      const big = await s.run("dd", ["if=/dev/zero", "of=/dev/null", "bs=128M", "count=1"]);
      assert.equal(big.exitCode, 1);
      assert.match(big.stderr, /memory exhausted/);
      const small = await s.run("dd", ["if=/dev/zero", "of=/dev/null", "bs=1M", "count=1"]);
      assert.equal(small.exitCode, 0, small.stderr);
    });
  });

  Deno.test(`[${mode}] file_size_bytes stops a write at the limit with SIGXFSZ`, async () => {
    await limited(mode, { fileSizeBytes: 1024 * 1024 }, async (s) => {
      const out = await s.run("dd", ["if=/dev/zero", "of=big", "bs=1M", "count=4"]);
      assert.equal(out.exitCode, 128 + 25); // SIGXFSZ
      const size = (await Deno.stat(`${s.jail}/big`)).size;
      assert.ok(size <= 1024 * 1024, String(size));
      const ok = await s.run("dd", ["if=/dev/zero", "of=small", "bs=1K", "count=4"]);
      assert.equal(ok.exitCode, 0);
    });
  });

  Deno.test(`[${mode}] open_files caps the descriptors a process may hold`, async () => {
    await limited(mode, { openFiles: 16 }, async (s) => {
      const script =
        "for i in $(seq 1 40); do exec {fd}</dev/null || { echo failed at $i; exit 7; }; done";
      const out = await s.run("bash", ["-c", script]);
      assert.equal(out.exitCode, 7);
      assert.match(out.stdout, /^failed at \d+\n$/);
      const few = await s.run("bash", ["-c", "exec {fd}</dev/null && echo opened"]);
      assert.equal(few.stdout, "opened\n");
    });
  });
}

Deno.test("[bwrap] max_processes caps the processes of the sandbox uid", async () => {
  await limited("bwrap", { maxProcesses: 20, timeoutMs: 5_000 }, async (s) => {
    const script = "i=0; while [ $i -lt 50 ]; do sleep 2 & i=$((i+1)); done; echo started $i";
    const out = await s.run("sh", ["-c", script]);
    assert.equal(out.code, "OK");
    assert.notEqual(out.exitCode, 0);
    assert.ok(!out.stdout.includes("started 50"), out.stdout);
    assert.match(out.stderr, /Cannot fork/);
    const few = await s.run("sh", ["-c", "sleep 0 & sleep 0 & wait; echo fine"]);
    assert.equal(few.stdout, "fine\n");
  });
});
