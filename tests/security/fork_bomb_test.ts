/**
 * A fork bomb under [limits] max_processes ends cleanly: the kernel refuses
 * forks past the limit, the run returns, no process of the sandbox uid is
 * left on the host, and the server keeps serving.
 */
import assert from "node:assert/strict";
import { listProcesses, samplePeak, setup } from "../exec/_fixtures.ts";
import { assertSandboxMode } from "../_helpers/jail.ts";

/** Host pids whose real uid is `uid` and whose command line contains `marker`. */
async function pidsOfUid(uid: number, marker: string): Promise<number[]> {
  // Forked bash subshells keep the parent's argv, marker included.
  return (await listProcesses())
    .filter((p) => p.uid === uid && p.argv.join("\0").includes(marker))
    .map((p) => p.pid);
}

Deno.test("a bash fork bomb ends cleanly under max_processes in the sandbox", async () => {
  // Other sandboxes may run as the same uid at the same time: count only ours.
  const marker = `bomb-${crypto.randomUUID()}`;
  const limit = 40;
  const s = await setup({
    mode: "bwrap",
    limits: { maxProcesses: limit, timeoutMs: 2_000 },
    allow: ["bash", "echo"],
  });
  try {
    await assertSandboxMode(s.executor, "bwrap");
    // Commands run as the jail's owner (65534 for the fixture's jail under root).
    const uid = s.executor.describe().commandUid;
    assert.notEqual(uid, 0);
    const sampler = await samplePeak(uid, marker, 5);
    const started = performance.now();
    const out = await s.run("bash", ["-c", `f(){ f | f & }; f; sleep 0.5; wait # ${marker}`]);
    const peak = await sampler.stop();
    assert.ok(out.code === "OK" || out.code === "TIMEOUT", out.code);
    assert.ok(performance.now() - started < 6_000);
    assert.match(out.stderr, /Resource temporarily unavailable|Cannot fork/);
    // Launcher processes (bwrap's monitor and init) share the uid but sit outside the limit.
    assert.ok(peak <= limit + 3, `peak ${peak}`);
    assert.deepEqual(await pidsOfUid(uid, marker), [], "every bomb process is reaped");
    const after = await s.run("echo", ["still serving"]);
    assert.equal(after.stdout, "still serving\n");
  } finally {
    await s.close();
  }
});
