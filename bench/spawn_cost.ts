/**
 * Per-call cost of running a command, side by side in one run: a bare
 * `Deno.Command` spawn (the physical floor), the executor with process-tree
 * containment only (`[sandbox] mode = "none"`), the executor with the
 * bubblewrap sandbox (`mode = "bwrap"`), the chain of system tools the
 * helper replaced (spawned bare, for comparison only), and bwrap's own floor
 * (bwrap with the sandbox's flags, spawned bare). Samples are interleaved
 * (one of each per round) so machine load affects all alike.
 *
 * The direct spawn is attached, as the executor's is: `detached: true` would
 * make Deno fork its whole process per spawn (about 3 ms here), a cost the
 * executor avoids by letting the chain's `setsid` open the new session.
 *
 * @module
 */
import { createExecutor, type Executor } from "../src/exec/mod.ts";
import type { Policy } from "../src/config/types.ts";
import { createRedactor } from "../src/redact/mod.ts";
import { buildBwrapArgs, detectHostLayout } from "../src/sandbox/mod.ts";
import { makePolicy, resolveOnPath } from "../tests/_helpers/policy.ts";
import { bwrapFloorSample } from "./_bwrap_floor.ts";
import { prepareJail } from "../scripts/_jail.ts";

/** Figures from one run, in milliseconds. */
export interface SpawnCostFigures {
  readonly n: number;
  readonly directP50Ms: number;
  readonly directP95Ms: number;
  readonly containedP50Ms: number;
  readonly containedP95Ms: number;
  readonly sandboxP50Ms: number;
  readonly sandboxP95Ms: number;
  /** containedP50Ms - directP50Ms */
  readonly containedExtraP50Ms: number;
  /** sandboxP50Ms - directP50Ms (the target: at most 10 ms) */
  readonly sandboxExtraP50Ms: number;
  /** The replaced chain (unshare, setsid, setpriv, timeout, setpriv, timeout), spawned bare. */
  readonly oldChainP50Ms: number;
  /** bwrap with the sandbox's flags running `true`, spawned bare: the sandbox's floor. */
  readonly bwrapFloorP50Ms: number;
  /** Time `createExecutor` took (startup probes), per mode. */
  readonly containedStartupMs: number;
  readonly sandboxStartupMs: number;
}

function percentile(sorted: readonly number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor((sorted.length * p) / 100))]!;
}

/**
 * The none-mode chain of system tools the helper replaced, as it ran before
 * (minus rlimits): measured here only, so the two can be compared in one run.
 */
const OLD_CHAIN: readonly [string, ...string[]] = [
  "/usr/bin/unshare",
  "--pid",
  "--",
  "/usr/bin/setsid",
  "--wait",
  "--",
  "/usr/bin/setpriv",
  "--pdeathsig",
  "KILL",
  "--",
  "/usr/bin/timeout",
  "--foreground",
  "--signal=KILL",
  "--",
  "32.000",
  "/usr/bin/setpriv",
  "--pdeathsig",
  "KILL",
  "--no-new-privs",
  "--",
  "/usr/bin/timeout",
  "--foreground",
  "--",
  "0",
];

async function build(policy: Policy): Promise<{ executor: Executor; ms: number }> {
  const started = performance.now();
  const built = await createExecutor(policy);
  if (!built.ok) throw new Error(built.message);
  return { executor: built.executor, ms: performance.now() - started };
}

/**
 * Runs `/usr/bin/true` `n` times each way (after 5 warm-up rounds) and returns
 * p50/p95 wall time per call, spawn to reap, output captured.
 *
 * @param n rounds (one call of each kind per round)
 * @returns the figures; the temp jail is removed
 */
export async function measureSpawnCosts(n: number): Promise<SpawnCostFigures> {
  const jail = await Deno.makeTempDir({ prefix: "htmcp-bench-" });
  await Deno.chmod(jail, 0o755);
  // Commands run as the jail's owner, never root.
  await prepareJail(jail);
  try {
    const base = makePolicy({ jailRoot: jail, allow: ["true"] });
    const contained = await build({
      ...base,
      sandbox: {
        mode: "none",
        network: "none",
        networkAllow: [],
        acceptPathCheckOnly: true,
        user: null,
      },
    });
    const sandboxed = await build({
      ...base,
      sandbox: {
        mode: "bwrap",
        network: "none",
        networkAllow: [],
        acceptPathCheckOnly: false,
        user: null,
      },
    });
    const command = resolveOnPath("true");
    const request = {
      callId: "bench",
      command,
      args: [],
      cwd: base.jailRoot,
      // The server's redactor, as in production (`true` prints nothing to redact).
      redactor: createRedactor(base.redaction),
    };
    const direct = async () => {
      await new Deno.Command(command.path, {
        cwd: base.jailRoot,
        clearEnv: true,
        env: base.childEnv,
        stdin: "null",
        stdout: "piped",
        stderr: "piped",
      }).output();
    };
    const bare = (path: string, args: string[]) => async () => {
      await new Deno.Command(path, {
        args,
        cwd: base.jailRoot,
        clearEnv: true,
        env: base.childEnv,
        stdin: "null",
        stdout: "piped",
        stderr: "piped",
      }).output();
    };
    const bwrapArgs = buildBwrapArgs(base, { cwd: base.jailRoot }, detectHostLayout());
    const kinds: Array<[number[], () => Promise<unknown>]> = [
      [[], direct],
      [[], () => contained.executor.run(request)],
      [[], () => sandboxed.executor.run(request)],
      [[], bare(OLD_CHAIN[0], [...OLD_CHAIN.slice(1), command.path])],
      [[], () =>
        bwrapFloorSample(bwrapArgs, [command.path], {
          cwd: base.jailRoot,
          clearEnv: true,
          env: base.childEnv,
        })],
    ];
    for (let round = 0; round < n + 5; round++) {
      for (const [samples, call] of kinds) {
        const started = performance.now();
        // The floor's call times itself (its shell taken off); the rest are timed here.
        const own = await call();
        if (round >= 5) samples.push(typeof own === "number" ? own : performance.now() - started);
      }
    }
    await contained.executor.shutdown();
    await sandboxed.executor.shutdown();
    const [d, c, s, old, floor] = kinds.map(([samples]) => samples.sort((a, b) => a - b)) as [
      number[],
      number[],
      number[],
      number[],
      number[],
    ];
    return {
      n,
      directP50Ms: percentile(d, 50),
      directP95Ms: percentile(d, 95),
      containedP50Ms: percentile(c, 50),
      containedP95Ms: percentile(c, 95),
      sandboxP50Ms: percentile(s, 50),
      sandboxP95Ms: percentile(s, 95),
      containedExtraP50Ms: percentile(c, 50) - percentile(d, 50),
      sandboxExtraP50Ms: percentile(s, 50) - percentile(d, 50),
      oldChainP50Ms: percentile(old, 50),
      bwrapFloorP50Ms: percentile(floor, 50),
      containedStartupMs: contained.ms,
      sandboxStartupMs: sandboxed.ms,
    };
  } finally {
    await Deno.remove(jail, { recursive: true });
  }
}
