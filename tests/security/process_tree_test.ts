/**
 * Containment: when run() returns, by any path, no process the call started
 * is alive, and none is left as a zombie either. Each case finds the
 * command's processes on the host through /proc while it runs (a unique
 * `sleep 300.N` argument marks them), then checks /proc/PID is gone after
 * the return: gone means dead and reaped (a zombie still has /proc/PID, and
 * `kill -0` would still succeed on it). The suite runs without the all-access
 * Deno demands for /proc, so an all-access child (`exec/_proc_probe.ts`) does
 * the reading.
 */
import assert from "node:assert/strict";
import type { SandboxMode } from "../../src/config/types.ts";
import { buildCallLaunch, DEFAULT_LAUNCHER_TOOLS, type LaunchPlan } from "../../src/exec/mod.ts";
import { detectHostLayout } from "../../src/sandbox/mod.ts";
import { makePolicy } from "../_helpers/policy.ts";
import {
  assertAllReaped,
  isServingHelper,
  makeJail,
  procState,
  procStates,
  type Setup,
  setup,
  startLaunch,
  uniqueSleep,
  waitForMarker,
} from "../exec/_fixtures.ts";
import { assertSandboxMode } from "../_helpers/jail.ts";

const MODES = ["none", "bwrap"] as const;
/** Waits (inside the command) until the test has seen every process. */
const WAIT_FOR_GO = "while [ ! -e go ]; do sleep 0.01; done";

async function withSetup(mode: SandboxMode, timeoutMs: number, fn: (s: Setup) => Promise<void>) {
  const s = await setup({ mode, limits: { timeoutMs } });
  try {
    await assertSandboxMode(s.executor, mode === "none" ? "none" : "bwrap");
    await fn(s);
  } finally {
    await s.close();
  }
}

/** Starts `script`, collects `count` marked pids, lets the script finish, returns outcome + pids. */
async function runAndCollect(s: Setup, script: string, marker: string, count: number) {
  const running = s.run("sh", ["-c", script]);
  const pids = await waitForMarker(marker, count);
  await Deno.writeTextFile(`${s.jail}/go`, "");
  return { outcome: await running, pids };
}

for (const mode of MODES) {
  Deno.test(`[${mode}] a timeout kills and reaps background children: sh -c 'sleep & sleep'`, async () => {
    await withSetup(mode, 800, async (s) => {
      const m = uniqueSleep();
      const running = s.run("sh", ["-c", `sleep ${m} & sleep ${m}`]);
      const pids = await waitForMarker(m, 2);
      const outcome = await running;
      assert.equal(outcome.code, "TIMEOUT");
      await assertAllReaped(pids);
    });
  });

  Deno.test(`[${mode}] a setsid daemon does not outlive a command that exited normally`, async () => {
    await withSetup(mode, 5_000, async (s) => {
      const m = uniqueSleep();
      const { outcome, pids } = await runAndCollect(s, `setsid sleep ${m} & ${WAIT_FOR_GO}`, m, 1);
      assert.equal(outcome.code, "OK");
      assert.equal(outcome.exitCode, 0);
      await assertAllReaped(pids);
    });
  });

  Deno.test(`[${mode}] a double-forked orphan does not outlive its command`, async () => {
    await withSetup(mode, 5_000, async (s) => {
      const m = uniqueSleep();
      const script = `sh -c 'setsid sh -c "sleep ${m} & sleep ${m}" &'; ${WAIT_FOR_GO}`;
      const { outcome, pids } = await runAndCollect(s, script, m, 2);
      assert.equal(outcome.code, "OK");
      for (const pid of pids) assert.notEqual(await procState(pid), "Z");
      await assertAllReaped(pids);
    });
  });

  Deno.test(`[${mode}] every child of a bounded fork loop is reaped`, async () => {
    await withSetup(mode, 5_000, async (s) => {
      const m = uniqueSleep();
      const script = `i=0; while [ $i -lt 12 ]; do sleep ${m} & i=$((i+1)); done; ${WAIT_FOR_GO}`;
      const { outcome, pids } = await runAndCollect(s, script, m, 12);
      assert.equal(outcome.code, "OK");
      assert.equal(pids.length, 12);
      await assertAllReaped(pids);
    });
  });

  Deno.test(`[${mode}] cancellation kills and reaps the whole tree`, async () => {
    await withSetup(mode, 5_000, async (s) => {
      const m = uniqueSleep();
      const controller = new AbortController();
      const running = s.run("sh", ["-c", `setsid sleep ${m} & sleep ${m}`], {
        signal: controller.signal,
      });
      const pids = await waitForMarker(m, 2);
      controller.abort();
      const outcome = await running;
      assert.equal(outcome.code, "CANCELLED");
      await assertAllReaped(pids);
    });
  });

  Deno.test(`[${mode}] shutdown kills and reaps every running tree`, async () => {
    await withSetup(mode, 5_000, async (s) => {
      const m = uniqueSleep();
      const first = s.run("sh", ["-c", `sleep ${m} & sleep ${m}`]);
      const second = s.run("sh", ["-c", `setsid sleep ${m} & sleep ${m}`]);
      const pids = await waitForMarker(m, 4);
      await s.executor.shutdown();
      const outcomes = await Promise.all([first, second]);
      assert.deepEqual(outcomes.map((o) => o.code), ["CANCELLED", "CANCELLED"]);
      await assertAllReaped(pids);
    });
  });
}

Deno.test("[none] pid files written by the children name processes that are gone after the timeout", async () => {
  await withSetup("none", 800, async (s) => {
    const m = uniqueSleep();
    // In none mode /proc is the host's: /proc/self/stat read by the shell itself
    // (a redirection, no fork) gives its host pid, which then execs sleep.
    const child = `read p rest < /proc/self/stat; echo $p > $0.pid; exec sleep ${m}`;
    const script = `sh -c '${child}' a & setsid sh -c '${child}' b & sh -c '${child}' c`;
    const running = s.run("sh", ["-c", script]);
    await waitForMarker(m, 3);
    const outcome = await running;
    assert.equal(outcome.code, "TIMEOUT");
    const pids = await Promise.all(
      ["a", "b", "c"].map(async (n) => Number(await Deno.readTextFile(`${s.jail}/${n}.pid`))),
    );
    assert.equal(pids.length, 3);
    await assertAllReaped(pids);
  });
});

Deno.test("a SIGKILLed server takes its commands' trees with it", async () => {
  const m = uniqueSleep();
  const s = await setup();
  await s.close();
  const script = `
    import { createExecutor } from "${new URL("../../src/exec/mod.ts", import.meta.url)}";
    import { createRedactor } from "${new URL("../../src/redact/mod.ts", import.meta.url)}";
    import { makePolicy } from "${new URL("../_helpers/policy.ts", import.meta.url)}";
    import { prepareJail } from "${new URL("../_helpers/jail.ts", import.meta.url)}";
    const jail = await Deno.makeTempDir();
    await Deno.chmod(jail, 0o755);
    await prepareJail(jail);
    const policy = makePolicy({ jailRoot: jail, allow: ["sh"] });
    const built = await createExecutor(policy);
    if (!built.ok) throw new Error(built.message);
    built.executor.run({ callId: "1", command: policy.allowlist.get("sh"),
      args: ["-c", "sleep ${m} & setsid sleep ${m} & sleep ${m}"], cwd: jail, redactor: createRedactor({ enabled: false, entropyFallback: false, extraPatterns: [] }) });
    await new Promise(() => {});
  `;
  const server = new Deno.Command(Deno.execPath(), {
    args: ["eval", "--no-prompt", "-A", script],
    stdout: "null",
    stderr: "null",
  }).spawn();
  const pids = await waitForMarker(m, 3, 10_000);
  server.kill("SIGKILL");
  await server.status;
  const deadline = performance.now() + 3_000;
  while (performance.now() < deadline && (await procStates(pids)).some((s) => s !== null)) {
    await new Promise((r) => setTimeout(r, 20));
  }
  await assertAllReaped(pids);
});

for (const mode of MODES) {
  Deno.test(`[${mode}] SIGKILL of the serving helper alone (every call's outer) still ends the tree`, async () => {
    const jail = await makeJail();
    try {
      const m = uniqueSleep();
      const policy = makePolicy({ jailRoot: jail });
      const plan: LaunchPlan = {
        mode,
        privilege: "root",
        serverIsRoot: true,
        runAs: { uid: 65534, gid: 65534 },
        tools: DEFAULT_LAUNCHER_TOOLS,
        backstopMs: 60_000,
        limits: policy.limits,
        layout: detectHostLayout(),
      };
      const launch = buildCallLaunch(plan, policy, {
        path: "/bin/sh",
        args: ["-c", `setsid sleep ${m} & sleep ${m}`],
        cwd: policy.jailRoot,
        env: { PATH: "/usr/bin:/bin" },
      });
      const launcher = await startLaunch(launch);
      const pids = await waitForMarker(m, 2);
      // Our own child, checked by its command line just before.
      assert.ok(await isServingHelper(launcher.helperPid), "the call's outer is a serving helper");
      Deno.kill(launcher.helperPid, "SIGKILL");
      assert.equal((await launcher.output()).code, 137);
      // PR_SET_PDEATHSIG kills the namespace's init, the kernel the rest: asynchronously.
      const deadline = performance.now() + 3_000;
      while (performance.now() < deadline && (await procStates(pids)).some((s) => s !== null)) {
        await new Promise((r) => setTimeout(r, 10));
      }
      await assertAllReaped(pids);
    } finally {
      await Deno.remove(jail, { recursive: true });
    }
  });
}
