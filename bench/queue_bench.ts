/**
 * The fair queue under load: authenticated `run_command("true")` over HTTP
 * with 1, 8 and 32 OAuth clients calling back to back, with the shipped
 * limits (`max_concurrent = 4`, `max_concurrent_per_client = 2`, the queue
 * on: `queue_wait_ms = 10000`, `queue_max = 64`). Beyond 4 callers every
 * extra call waits in the queue; a refused call (BUSY) aborts the run, so a
 * printed row also says that none was refused.
 *
 * Run: deno run -A bench/queue_bench.ts [calls-per-client]
 *
 * @module
 */
import { type BenchRow, measureHttpBench } from "./http_bench.ts";

/**
 * Measures calls/s and p50/p95 with queueing on.
 *
 * @param callsPerClient Calls each client makes at each level.
 * @returns One row per client count.
 */
export function measureQueueBench(callsPerClient: number): Promise<BenchRow[]> {
  return measureHttpBench({
    concurrency: [1, 8, 32],
    callsPerClient,
    stdio: false,
    defaultLimits: true,
  });
}

if (import.meta.main) {
  const calls = Number(Deno.args[0] ?? 40);
  console.log(
    "clients   calls   calls/s   p50 ms   p95 ms   (queueing on, default limits, none refused)",
  );
  for (const row of await measureQueueBench(calls)) {
    console.log(
      `${String(row.clients).padStart(7)} ${String(row.calls).padStart(7)} ${
        String(row.callsPerSecond).padStart(9)
      } ${row.p50Ms.toFixed(2).padStart(8)} ${row.p95Ms.toFixed(2).padStart(8)}`,
    );
  }
}
