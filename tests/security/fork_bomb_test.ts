/**
 * A fork bomb under [limits] max_processes ends cleanly: the kernel refuses
 * forks past the limit, the run returns, no process of the sandbox uid is
 * left on the host, and the server keeps serving.
 */
import assert from "node:assert/strict";
import { setup } from "../exec/_fixtures.ts";

const SANDBOX_UID = 65534;

/** Host pids whose real uid is `uid` and whose command line contains `marker`. */
function pidsOfUid(uid: number, marker: string): number[] {
  const out: number[] = [];
  for (const entry of Deno.readDirSync("/proc")) {
    if (!/^\d+$/.test(entry.name)) continue;
    try {
      const status = Deno.readTextFileSync(`/proc/${entry.name}/status`);
      const real = /^Uid:\s+(\d+)/m.exec(status)?.[1];
      if (Number(real) !== uid) continue;
      // Forked bash subshells keep the parent's argv, marker included.
      if (Deno.readTextFileSync(`/proc/${entry.name}/cmdline`).includes(marker)) {
        out.push(Number(entry.name));
      }
    } catch {
      // exited
    }
  }
  return out;
}

Deno.test("a bash fork bomb ends cleanly under max_processes in the sandbox", async () => {
  // Other sandboxes may run as the same uid at the same time: count only ours.
  const marker = `bomb-${crypto.randomUUID()}`;
  const ours = () => pidsOfUid(SANDBOX_UID, marker);
  const limit = 40;
  const s = await setup({
    mode: "bwrap",
    limits: { maxProcesses: limit, timeoutMs: 2_000 },
    allow: ["bash", "echo"],
  });
  try {
    let peak = 0;
    let sampling = true;
    const sampler = (async () => {
      while (sampling) {
        try {
          peak = Math.max(peak, ours().length);
        } catch {
          // /proc unreadable under narrow permissions: the assertions after the run report it.
        }
        await new Promise((r) => setTimeout(r, 5));
      }
    })();
    const started = performance.now();
    const out = await s.run("bash", ["-c", `f(){ f | f & }; f; sleep 0.5; wait # ${marker}`]);
    sampling = false;
    await sampler;
    assert.ok(out.code === "OK" || out.code === "TIMEOUT", out.code);
    assert.ok(performance.now() - started < 6_000);
    assert.match(out.stderr, /Resource temporarily unavailable|Cannot fork/);
    // Launcher processes (bwrap's monitor and init) share the uid but sit outside the limit.
    assert.ok(peak <= limit + 3, `peak ${peak}`);
    assert.deepEqual(ours(), [], "every bomb process is reaped");
    const after = await s.run("echo", ["still serving"]);
    assert.equal(after.stdout, "still serving\n");
  } finally {
    await s.close();
  }
});
