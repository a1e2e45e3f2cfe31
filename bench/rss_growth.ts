/**
 * Server RSS over many calls: `run_command("true")` through the real SDK
 * client over stdio (the server started directly under its generated
 * permission flags, so the pid measured is the server), RSS sampled after
 * 1,000, 2,500 and 5,000 calls and at the end (10,000). Target: flat within 10 %
 * from 1,000 to 10,000.
 *
 * Run: deno run -A bench/rss_growth.ts [total-calls] [in-flight]
 *
 * @module
 */
import { serverUnderFlags, writePolicy } from "./_server.ts";
import { connect, roundTrips, rssMiB } from "./stdio_roundtrip.ts";

/** RSS after each checkpoint of calls. */
export interface RssGrowth {
  readonly checkpoints: readonly { readonly calls: number; readonly rssMiB: number }[];
}

/**
 * Runs `total` calls, `inFlight` at a time, sampling RSS at 1,000, 2,500, 5,000 and `total`.
 *
 * @param total Calls in all (at least 1,000).
 * @param inFlight Concurrent callers on the one connection (at most max_concurrent: 4).
 * @param onCheckpoint Called with each sample as it is taken.
 * @returns The samples.
 */
export async function measureRssGrowth(
  total = 10_000,
  inFlight = 4,
  onCheckpoint: (calls: number, rssMiB: number) => void = () => {},
): Promise<RssGrowth> {
  const dir = await Deno.makeTempDir({ prefix: "htmcp-bench-rss-" });
  await Deno.chmod(dir, 0o755);
  try {
    const launch = await serverUnderFlags(await writePolicy(dir, "none"));
    const { client, pid } = await connect(launch);
    if (pid === undefined) throw new Error("The server's pid is unknown.");
    const checkpoints: { calls: number; rssMiB: number }[] = [];
    let done = 0;
    const runTo = async (target: number) => {
      const per = Math.ceil((target - done) / inFlight);
      await Promise.all(Array.from({ length: inFlight }, () => roundTrips(client, "true", per)));
      done += per * inFlight;
      // A moment for the collector to run before the sample.
      await new Promise((resolve) => setTimeout(resolve, 500));
      const rss = await rssMiB(pid);
      checkpoints.push({ calls: done, rssMiB: rss });
      onCheckpoint(done, rss);
    };
    try {
      // The checkpoints between show whether growth levels off (a heap
      // settling) or keeps rising with the count (a leak).
      for (const target of [1_000, 2_500, 5_000]) if (target < total) await runTo(target);
      await runTo(total);
    } finally {
      await client.close();
    }
    return { checkpoints };
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
}

if (import.meta.main) {
  const total = Number(Deno.args[0] ?? 10_000);
  const inFlight = Number(Deno.args[1] ?? 4);
  const { checkpoints } = await measureRssGrowth(total, inFlight);
  for (const point of checkpoints) {
    console.log(
      `after ${String(point.calls).padStart(6)} calls: RSS ${point.rssMiB.toFixed(1)} MiB`,
    );
  }
  const [first, last] = [checkpoints[0], checkpoints.at(-1)];
  if (first !== undefined && last !== undefined) {
    console.log(
      `growth ${((last.rssMiB / first.rssMiB - 1) * 100).toFixed(1)} % (target: within 10 %)`,
    );
  }
}
