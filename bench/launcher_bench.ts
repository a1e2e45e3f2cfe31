/**
 * The launcher's share of a call, through the real SDK client over stdio and
 * side by side in one run: a `run_command("true")` round trip against a bare
 * `Deno.Command` spawn (the floor) and against the bwrap floor (a bare spawn
 * of `bwrap` with the sandbox's own flags, no launcher around it), eight
 * calls in flight, and the server's peak RSS while one call prints 50 MB.
 *
 * @module
 */
import type { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { buildBwrapArgs, detectHostLayout } from "../src/sandbox/mod.ts";
import { makePolicy } from "../tests/_helpers/policy.ts";
import {
  bareSpawn,
  connect,
  type Percentiles,
  percentiles,
  roundTrips,
  type ServerLaunch,
} from "./stdio_roundtrip.ts";

/** Figures for one sandbox mode. */
export interface LauncherFigures {
  readonly mode: "none" | "bwrap";
  /** The round trip, in ms. */
  readonly server: Percentiles;
  /** The floor this mode is compared with: a bare spawn of `true`, or of bwrap running `true`. */
  readonly floor: Percentiles;
  /** Calls per second with eight calls in flight on one connection. */
  readonly inflightCallsPerSecond: number;
  /** Peak RSS growth of the server while one call prints 50 MB, in MiB. */
  readonly floodPeakMiB: number;
  /** How long that call took, in ms. */
  readonly floodMs: number;
}

/** Bytes `seq 1 FLOOD_LINES` prints: 56,888,897, about 50 MB (decimal) of output. */
const FLOOD_LINES = 7_000_000;

async function statusKiB(pid: number, field: "VmRSS" | "VmHWM"): Promise<number> {
  const status = await Deno.readTextFile(`/proc/${pid}/status`);
  return Number(new RegExp(`${field}:\\s+(\\d+)`).exec(status)?.[1] ?? NaN);
}

/** Eight concurrent callers, `perCaller` calls each: calls per second. */
async function inflight(client: Client, perCaller: number): Promise<number> {
  const t0 = performance.now();
  await Promise.all(
    Array.from({ length: 8 }, () => roundTrips(client, "true", perCaller)),
  );
  return (8 * perCaller * 1000) / (performance.now() - t0);
}

/** The sandbox floor: bwrap itself, with the flags the launcher gives it, running `true`. */
async function bwrapFloor(jail: string, n: number): Promise<number[]> {
  const policy = makePolicy({
    jailRoot: jail,
    overrides: { sandbox: { mode: "bwrap", network: false } },
  });
  const args = [
    ...buildBwrapArgs(policy, { cwd: jail }, detectHostLayout()),
    "--",
    "/usr/bin/true",
  ];
  const samples: number[] = [];
  for (let i = 0; i < n; i++) {
    const t0 = performance.now();
    await new Deno.Command("/usr/bin/bwrap", {
      args,
      stdout: "piped",
      stderr: "piped",
      stdin: "null",
    }).output();
    samples.push(performance.now() - t0);
  }
  return samples;
}

/**
 * Measures one mode.
 *
 * @param launch How to start the server (a policy allowing `true` and `seq`).
 * @param mode The policy's sandbox mode.
 * @param jail The policy's jail root.
 * @param calls Round trips to time (in batches interleaved with the floor).
 * @returns The figures.
 */
export async function measureLauncher(
  launch: ServerLaunch,
  mode: "none" | "bwrap",
  jail: string,
  calls: number,
): Promise<LauncherFigures> {
  const { client, pid } = await connect(launch);
  try {
    await roundTrips(client, "true", 20); // warm-up
    const server: number[] = [];
    const floor: number[] = [];
    for (let batch = 0; batch < 10; batch++) {
      server.push(...await roundTrips(client, "true", calls / 10));
      floor.push(
        ...(mode === "none"
          ? await bareSpawn("/usr/bin/true", calls / 10)
          : await bwrapFloor(jail, calls / 10)),
      );
    }
    await inflight(client, 5); // warm-up
    const rates: number[] = [];
    for (let round = 0; round < 3; round++) rates.push(await inflight(client, 25));
    rates.sort((a, b) => a - b);

    let floodPeakMiB = NaN;
    let floodMs = NaN;
    if (pid !== undefined) {
      const before = await statusKiB(pid, "VmRSS");
      const t0 = performance.now();
      const result = await client.callTool({
        name: "run_command",
        arguments: { command: `seq 1 ${FLOOD_LINES}` },
      });
      floodMs = performance.now() - t0;
      const code = (result.structuredContent as { code?: string } | undefined)?.code;
      if (code !== "OUTPUT_TRUNCATED") throw new Error(`the 50 MB call returned ${code}`);
      floodPeakMiB = ((await statusKiB(pid, "VmHWM")) - before) / 1024;
    }
    return {
      mode,
      server: percentiles(server),
      floor: percentiles(floor),
      inflightCallsPerSecond: rates[1] ?? NaN,
      floodPeakMiB,
      floodMs,
    };
  } finally {
    await client.close();
  }
}
