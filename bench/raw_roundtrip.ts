/**
 * The server's own cost per call, without any MCP client library: raw
 * JSON-RPC lines over the server's stdio, `run_command("true")`,
 * `explain_command("true")` (judged, never run) and `ping` interleaved. The
 * SDK client's own work per call (validating every result against the
 * tool's output schema) is left out, so the difference between the three is
 * what the server spends: the protocol (`ping`), a tool call's judgement
 * (`explain_command`), and a contained run with its two audit records.
 *
 * Usage: deno run -A bench/raw_roundtrip.ts [N]   (default 300 of each)
 *
 * @module
 */
import { serverUnderFlags, writePolicy } from "./_server.ts";
import { startLineClient } from "./_line_client.ts";
import { percentiles } from "./stdio_roundtrip.ts";

const p50 = (samples: readonly number[]) => percentiles(samples).p50;

/** p50 in ms of each kind of request. */
export interface RawRoundTrips {
  readonly runP50Ms: number;
  readonly explainP50Ms: number;
  readonly pingP50Ms: number;
}

/** Starts the server under its generated flags (mode none) and times `n` of each request. */
export async function measureRawRoundTrips(n: number): Promise<RawRoundTrips> {
  const dir = await Deno.makeTempDir({ prefix: "htmcp-bench-" });
  await Deno.chmod(dir, 0o755); // the sandbox user must reach the jail below it
  const client = await startLineClient(await serverUnderFlags(await writePolicy(dir, "none")));
  try {
    const run: number[] = [];
    const explain: number[] = [];
    const ping: number[] = [];
    const timed = async (into: number[], method: string, params: Record<string, unknown>) => {
      const t0 = performance.now();
      const answer = await client.request(method, params);
      into.push(performance.now() - t0);
      if (answer.error !== undefined) throw new Error(`${method}: ${JSON.stringify(answer.error)}`);
    };
    for (let i = 0; i < n; i++) {
      await timed(run, "tools/call", { name: "run_command", arguments: { command: "true" } });
      await timed(explain, "tools/call", {
        name: "explain_command",
        arguments: { command: "true" },
      });
      await timed(ping, "ping", {});
    }
    return { runP50Ms: p50(run), explainP50Ms: p50(explain), pingP50Ms: p50(ping) };
  } finally {
    await client.close();
    await Deno.remove(dir, { recursive: true }).catch(() => {});
  }
}

if (import.meta.main) {
  const n = Number(Deno.args[0] ?? 300);
  const figures = await measureRawRoundTrips(n);
  console.log(
    `raw JSON-RPC over stdio, p50 of ${n} each: run_command("true") ${
      figures.runP50Ms.toFixed(2)
    } ms, explain_command("true") ${figures.explainP50Ms.toFixed(2)} ms, ping ${
      figures.pingP50Ms.toFixed(2)
    } ms`,
  );
}
