/**
 * Section 2c of `deno task bench` alone: `deno run -A bench/pipeline_main.ts`.
 *
 * @module
 */
import { serverUnderFlags, writePolicy } from "./_server.ts";
import { connect } from "./stdio_roundtrip.ts";
import { measurePipeline, PIPELINE } from "./pipeline_bench.ts";

const fmt = (ms: number) => ms.toFixed(2);

/** Prints one line per sandbox mode: one call vs three calls, p50/p95 and the ratio. */
export async function printPipelineSection(dir: string, rounds = 50): Promise<void> {
  console.log(
    `\n2c. "${PIPELINE}" as one call vs the same three commands as three calls (stdin fed)`,
  );
  for (const mode of ["none", "bwrap"] as const) {
    const policy = await writePolicy(dir, mode, ["seq", "sort", "head"]);
    const { client } = await connect(await serverUnderFlags(policy));
    try {
      const p = await measurePipeline(client, rounds);
      console.log(
        `   ${mode.padEnd(6)} one call p50/p95 ${fmt(p.oneCall.p50)}/${fmt(p.oneCall.p95)} ms, ` +
          `three calls ${fmt(p.threeCalls.p50)}/${fmt(p.threeCalls.p95)} ms, ratio p50 ${
            (p.threeCalls.p50 / p.oneCall.p50).toFixed(2)
          }x`,
      );
    } finally {
      await client.close();
    }
  }
}

if (import.meta.main) {
  const dir = await Deno.makeTempDir({ prefix: "htmcp-bench-" });
  await Deno.chmod(dir, 0o755); // the sandbox user must reach the jail below it
  try {
    await printPipelineSection(dir);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
}
