/**
 * What the operator log and the OpenTelemetry export cost per call:
 * `run_command("true")` round trips over stdio through the real SDK client,
 * side by side, for one policy in four forms: the default (text log lines at
 * info, telemetry off), `[log] level = "error"` (no per-call lines),
 * `[log] format = "json"`, and `[telemetry]` exporting to a loopback OTLP/HTTP
 * receiver this script runs. Telemetry off loads no SDK (a dynamic import
 * taken only when `[telemetry]` is set), so the default form is the
 * baseline; the figures are reported, never asserted.
 *
 * `deno run -A bench/telemetry_bench.ts` (HTMCP_BENCH_CALLS, default 300).
 *
 * @module
 */
import { serverUnderFlags, writePolicy } from "./_server.ts";
import { connect, percentiles, roundTrips, rssMiB } from "./stdio_roundtrip.ts";

const CALLS = Number(Deno.env.get("HTMCP_BENCH_CALLS") ?? 300);
const WARMUP = 20;

interface Row {
  readonly form: string;
  readonly p50: number;
  readonly p95: number;
  readonly coldStartMs: number;
  readonly rss: number;
}

/** Runs the four forms and returns one row each. */
export async function measureTelemetryCost(dir: string): Promise<Row[]> {
  let posts = 0;
  const receiver = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen() {} }, async (req) => {
    await req.arrayBuffer();
    posts++;
    return new Response("{}", { headers: { "content-type": "application/json" } });
  });
  const base = await Deno.readTextFile(await writePolicy(dir, "none"));
  const forms: [string, string][] = [
    ["default: text log at info, telemetry off", ""],
    ['[log] level = "error"', '[log]\nlevel = "error"\n'],
    ['[log] format = "json"', '[log]\nformat = "json"\n'],
    [
      "[telemetry] to a loopback receiver",
      `[telemetry]\notlp_endpoint = "http://127.0.0.1:${receiver.addr.port}"\nmetrics_interval_ms = 1000\n`,
    ],
  ];
  const rows: Row[] = [];
  try {
    for (const [index, [form, extra]] of forms.entries()) {
      const policy = `${dir}/policy-telemetry-${index}.toml`;
      await Deno.writeTextFile(
        policy,
        base.replace(/audit-[^"]+\.jsonl/, `audit-t${index}.jsonl`) + extra,
      );
      const { client, coldStartMs, pid } = await connect(await serverUnderFlags(policy));
      try {
        await roundTrips(client, "true", WARMUP);
        const stats = percentiles(await roundTrips(client, "true", CALLS));
        rows.push({
          form,
          ...stats,
          coldStartMs,
          rss: pid === undefined ? NaN : await rssMiB(pid),
        });
      } finally {
        await client.close();
      }
    }
  } finally {
    await receiver.shutdown();
  }
  if (posts === 0) throw new Error("the telemetry form exported nothing: the figures would lie");
  return rows;
}

if (import.meta.main) {
  const dir = await Deno.makeTempDir({ prefix: "htmcp-bench-telemetry-" });
  try {
    const rows = await measureTelemetryCost(dir);
    const baseline = rows[0]?.p50 ?? NaN;
    console.log(`run_command("true") over stdio, ${CALLS} calls each (sandbox none)`);
    console.log("| Form | p50 ms | p95 ms | vs default p50 | cold start ms | RSS MiB |");
    console.log("| --- | --- | --- | --- | --- | --- |");
    for (const row of rows) {
      console.log(
        `| ${row.form} | ${row.p50.toFixed(2)} | ${row.p95.toFixed(2)} | ${
          (row.p50 / baseline).toFixed(2)
        }x | ${row.coldStartMs.toFixed(0)} | ${row.rss.toFixed(1)} |`,
      );
    }
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
}
