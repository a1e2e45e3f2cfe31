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
import { bwrapFloorSample } from "./_bwrap_floor.ts";
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
  /**
   * Peak RSS growth of the server over one call that prints just over the
   * cap (what rendering the kept output costs), in MiB.
   */
  readonly capPeakMiB: number;
  /** Peak RSS growth after a further call that prints 50 MB, in MiB. */
  readonly floodPeakMiB: number;
  /** How long that call took, in ms. */
  readonly floodMs: number;
}

/** Bytes `seq 1 FLOOD_LINES` prints: 54,888,896, about 50 MB (decimal) of output. */
const FLOOD_LINES = 7_000_000;

/** `seq 1 CAP_LINES` prints 1,288,895 bytes: just over the default 1 MiB cap. */
const CAP_LINES = 190_000;

async function truncatedCall(client: Client, lines: number): Promise<number> {
  const t0 = performance.now();
  const result = await client.callTool({
    name: "run_command",
    arguments: { command: `seq 1 ${lines}` },
  });
  const ms = performance.now() - t0;
  const code = (result.structuredContent as { code?: string } | undefined)?.code;
  if (code !== "OUTPUT_TRUNCATED") throw new Error(`seq 1 ${lines} returned ${code}`);
  return ms;
}

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
    overrides: {
      sandbox: {
        mode: "bwrap",
        network: "none",
        networkAllow: [],
        acceptPathCheckOnly: false,
        user: null,
      },
    },
  });
  const args = buildBwrapArgs(policy, { cwd: jail }, detectHostLayout());
  const samples: number[] = [];
  for (let i = 0; i < n; i++) samples.push(await bwrapFloorSample(args, ["/usr/bin/true"]));
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

    let capPeakMiB = NaN;
    let floodPeakMiB = NaN;
    let floodMs = NaN;
    if (pid !== undefined) {
      // The peak (VmHWM) only grows: the flood's own cost is what it adds
      // beyond the peak of rendering one capped output.
      const before = await statusKiB(pid, "VmRSS");
      await truncatedCall(client, CAP_LINES);
      capPeakMiB = ((await statusKiB(pid, "VmHWM")) - before) / 1024;
      floodMs = await truncatedCall(client, FLOOD_LINES);
      floodPeakMiB = ((await statusKiB(pid, "VmHWM")) - before) / 1024;
    }
    return {
      mode,
      server: percentiles(server),
      floor: percentiles(floor),
      inflightCallsPerSecond: rates[1] ?? NaN,
      capPeakMiB,
      floodPeakMiB,
      floodMs,
    };
  } finally {
    await client.close();
  }
}
