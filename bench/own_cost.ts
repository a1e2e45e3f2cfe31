/**
 * htmcp's own cost per call, measured interleaved: a `run_command("true")`
 * round trip through the real SDK client to the server (mode none, started
 * under its generated flags), and the same spawn path without MCP or audit
 * (an executor of the same mode in this process, running `true` in a jail of
 * its own), one of each in turn. What the round trip adds over the spawn path
 * is the server's own work: the protocol, the policy, the jail's checks, the
 * audit records and their fdatasync.
 *
 * Taken from two sections measured minutes apart, that difference swings by
 * more than itself on a shared VM (0.5 to 2 ms in runs of one afternoon):
 * here both sides see the same moment, and the median of the pairs'
 * differences is reported beside the difference of the medians.
 *
 * Run: deno run -A bench/own_cost.ts [PAIRS]
 *
 * @module
 */
import { createExecutor } from "../src/exec/mod.ts";
import { createRedactor } from "../src/redact/mod.ts";
import { makePolicy, resolveOnPath } from "../tests/_helpers/policy.ts";
import { prepareJail } from "../scripts/_jail.ts";
import { serverUnderFlags, writePolicy } from "./_server.ts";
import { connect, percentiles, roundTrips } from "./stdio_roundtrip.ts";
import { startLineClient } from "./_line_client.ts";

/** One client's figures against the spawn path, in ms. */
export interface OwnCostSide {
  /** Its round trip's median. */
  readonly roundTripP50Ms: number;
  /** roundTripP50Ms minus the spawn path's median. */
  readonly differenceOfMediansMs: number;
  /** The median over rounds of (its round trip - the spawn path), taken in the same round. */
  readonly medianOfDifferencesMs: number;
}

/** The interleaved figures. */
export interface OwnCost {
  readonly rounds: number;
  /** The same spawn path, no MCP, no audit. */
  readonly spawnPathP50Ms: number;
  /** Through the real SDK client: its own parsing is in the round trip too. */
  readonly sdkClient: OwnCostSide;
  /** Through a raw JSON-RPC client (a line out, a line in): the server's share alone. */
  readonly rawClient: OwnCostSide;
}

function side(trips: readonly number[], paths: readonly number[]): OwnCostSide {
  const roundTripP50Ms = percentiles(trips).p50;
  return {
    roundTripP50Ms,
    differenceOfMediansMs: roundTripP50Ms - percentiles(paths).p50,
    medianOfDifferencesMs: percentiles(trips.map((trip, i) => trip - paths[i]!)).p50,
  };
}

/**
 * Measures `rounds` rounds after a warm-up of 20: each round one SDK round
 * trip, one raw round trip (each to a server of its own) and one spawn path,
 * their order rotating from round to round.
 *
 * @param rounds How many of each.
 */
export async function measureOwnCost(rounds = 300): Promise<OwnCost> {
  const dir = await Deno.makeTempDir({ prefix: "htmcp-bench-own-" });
  await Deno.chmod(dir, 0o755); // the jail's owner must reach the jail below it
  try {
    const launch = await serverUnderFlags(await writePolicy(dir, "none"));
    const { client } = await connect(launch);
    const raw = await startLineClient(launch);
    const jail = `${dir}/executor-jail`;
    await Deno.mkdir(jail);
    await prepareJail(jail);
    // The test policy's sandbox is mode none with the opt-in, as the server's here.
    const base = makePolicy({ jailRoot: jail, allow: ["true"] });
    const built = await createExecutor(base);
    if (!built.ok) throw new Error(built.message);
    if (built.executor.describe().mode !== "none") {
      throw new Error("the spawn path is not mode none");
    }
    const executor = built.executor;
    const request = {
      callId: "bench",
      command: resolveOnPath("true"),
      args: [],
      cwd: jail,
      // The server's redactor, as in production (`true` prints nothing to redact).
      redactor: createRedactor(base.redaction),
    };
    const timed = async (call: () => Promise<void>) => {
      const started = performance.now();
      await call();
      return performance.now() - started;
    };
    const kinds: (() => Promise<number>)[] = [
      async () => (await roundTrips(client, "true", 1))[0]!,
      () =>
        timed(async () => {
          const answer = await raw.request("tools/call", {
            name: "run_command",
            arguments: { command: "true" },
          });
          const code = (answer.result as { structuredContent?: { code?: string } } | undefined)
            ?.structuredContent?.code;
          if (code !== "OK") throw new Error(`the raw round trip returned ${code}`);
        }),
      () =>
        timed(async () => {
          const outcome = await executor.run(request);
          if (outcome.code !== "OK") throw new Error(`the spawn path returned ${outcome.code}`);
        }),
    ];
    try {
      const samples: number[][] = kinds.map(() => []);
      for (let round = 0; round < rounds + 20; round++) {
        // Rotating the order, so no kind always follows the same other's wake.
        for (let k = 0; k < kinds.length; k++) {
          const kind = (round + k) % kinds.length;
          const ms = await kinds[kind]!();
          if (round >= 20) samples[kind]!.push(ms);
        }
      }
      const [sdk, line, paths] = samples as [number[], number[], number[]];
      return {
        rounds,
        spawnPathP50Ms: percentiles(paths).p50,
        sdkClient: side(sdk, paths),
        rawClient: side(line, paths),
      };
    } finally {
      await executor.shutdown();
      await client.close();
      await raw.close();
    }
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
}

if (import.meta.main) {
  const f = await measureOwnCost(Number(Deno.args[0] ?? 300));
  const fmt = (ms: number) => ms.toFixed(2);
  console.log(`${f.rounds} rounds; the spawn path p50 ${fmt(f.spawnPathP50Ms)} ms`);
  for (const [name, one] of [["SDK client", f.sdkClient], ["raw client", f.rawClient]] as const) {
    console.log(
      `${name}: round trip p50 ${fmt(one.roundTripP50Ms)} ms; own cost ${
        fmt(one.medianOfDifferencesMs)
      } ms (median of differences), ${fmt(one.differenceOfMediansMs)} ms (difference of medians)`,
    );
  }
}
