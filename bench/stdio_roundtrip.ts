/**
 * Round-trip latency of `run_command("true")` through the real SDK client
 * over stdio, measured side by side with a bare `Deno.Command` spawn of the
 * same binary (the physical floor), plus the server's cold start to the first
 * `initialize` response and its idle RSS.
 *
 * @module
 */
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";

export interface Percentiles {
  p50: number;
  p95: number;
}

/** p50/p95 of `samples` (milliseconds). */
export function percentiles(samples: readonly number[]): Percentiles {
  const sorted = [...samples].sort((a, b) => a - b);
  const at = (q: number) =>
    sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))] ?? NaN;
  return { p50: at(0.5), p95: at(0.95) };
}

export interface ServerLaunch {
  command: string;
  args: string[];
  env: Record<string, string>;
}

/** Connects a real client to a freshly started server; returns it and the time to `initialize`. */
export async function connect(
  launch: ServerLaunch,
): Promise<{ client: Client; coldStartMs: number; pid: number | undefined }> {
  const transport = new StdioClientTransport({ ...launch, stderr: "ignore" });
  const client = new Client({ name: "htmcp-bench", version: "1.0.0" });
  const t0 = performance.now();
  await client.connect(transport);
  return { client, coldStartMs: performance.now() - t0, pid: transport.pid ?? undefined };
}

/** Bare spawn of `binary` with no arguments, `n` times. */
export async function bareSpawn(binary: string, n: number): Promise<number[]> {
  const samples: number[] = [];
  for (let i = 0; i < n; i++) {
    const t0 = performance.now();
    await new Deno.Command(binary, { stdout: "piped", stderr: "piped", stdin: "null" }).output();
    samples.push(performance.now() - t0);
  }
  return samples;
}

/** `run_command(command)` round trips through `client`, `n` times. */
export async function roundTrips(client: Client, command: string, n: number): Promise<number[]> {
  const samples: number[] = [];
  for (let i = 0; i < n; i++) {
    const t0 = performance.now();
    const result = await client.callTool({ name: "run_command", arguments: { command } });
    samples.push(performance.now() - t0);
    const code = (result.structuredContent as { code?: string } | undefined)?.code;
    if (code !== "OK") throw new Error(`run_command("${command}") returned ${code}`);
  }
  return samples;
}

/**
 * CPU time (user + system) `pid` itself has used so far, in ms, from /proc:
 * its children (the commands) are not included. Unlike wall time it barely
 * moves with the machine's load, so it compares runs on a shared machine.
 */
export async function cpuMs(pid: number): Promise<number> {
  const stat = await Deno.readTextFile(`/proc/${pid}/stat`);
  // Fields after the command name (which may hold spaces) start at the state, field 3.
  const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
  const ticks = Number(fields[11]) + Number(fields[12]);
  return ticks * 10; // USER_HZ is 100 on Linux
}

/** Resident set size of `pid` in MiB, from /proc (the bench runs unconfined). */
export async function rssMiB(pid: number): Promise<number> {
  const status = await Deno.readTextFile(`/proc/${pid}/status`);
  const kb = Number(/VmRSS:\s+(\d+)/.exec(status)?.[1] ?? NaN);
  return kb / 1024;
}
