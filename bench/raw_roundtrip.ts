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

/** p50 in ms of each kind of request. */
export interface RawRoundTrips {
  readonly runP50Ms: number;
  readonly explainP50Ms: number;
  readonly pingP50Ms: number;
}

function p50(samples: number[]): number {
  const sorted = [...samples].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)] ?? NaN;
}

/** Starts the server under its generated flags (mode none) and times `n` of each request. */
export async function measureRawRoundTrips(n: number): Promise<RawRoundTrips> {
  const dir = await Deno.makeTempDir({ prefix: "htmcp-bench-" });
  await Deno.chmod(dir, 0o755); // the sandbox user must reach the jail below it
  const launch = await serverUnderFlags(await writePolicy(dir, "none"));
  const child = new Deno.Command(launch.command, {
    args: launch.args,
    env: launch.env,
    clearEnv: true,
    stdin: "piped",
    stdout: "piped",
    stderr: "null",
  }).spawn();
  const writer = child.stdin.getWriter();
  const reader = child.stdout.pipeThrough(new TextDecoderStream()).getReader();
  let buffered = "";
  let nextId = 0;
  const send = (message: Record<string, unknown>) =>
    writer.write(new TextEncoder().encode(JSON.stringify(message) + "\n"));
  const request = async (method: string, params: Record<string, unknown>): Promise<void> => {
    const id = ++nextId;
    await send({ jsonrpc: "2.0", id, method, params });
    while (true) {
      const newline = buffered.indexOf("\n");
      if (newline >= 0) {
        const line = buffered.slice(0, newline);
        buffered = buffered.slice(newline + 1);
        const message = JSON.parse(line) as { id?: unknown; error?: unknown };
        if (message.id !== id) continue;
        if (message.error !== undefined) throw new Error(`${method}: ${line}`);
        return;
      }
      const { value, done } = await reader.read();
      if (done) throw new Error("the server closed its stdout");
      buffered += value;
    }
  };
  try {
    await request("initialize", {
      protocolVersion: "2025-06-18",
      capabilities: {},
      clientInfo: { name: "htmcp-bench-raw", version: "0" },
    });
    await send({ jsonrpc: "2.0", method: "notifications/initialized" });
    const run: number[] = [];
    const explain: number[] = [];
    const ping: number[] = [];
    const timed = async (into: number[], method: string, params: Record<string, unknown>) => {
      const t0 = performance.now();
      await request(method, params);
      into.push(performance.now() - t0);
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
    await writer.close().catch(() => {});
    await child.status;
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
