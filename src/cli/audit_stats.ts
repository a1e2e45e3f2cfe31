/**
 * `htmcp audit stats FILE [filters] [--json]`: what the log says in numbers:
 * calls (allowed, refused, explained), refusals by code, results of allowed
 * calls, p50/p95 duration, the most frequent commands and a line per client.
 * The log is streamed; only counters and the durations are kept.
 *
 * @module
 */
import { parseArgs } from "./args.ts";
import { CallAssembler, type CallRow, type ReadStats, recordsFrom } from "./audit_calls.ts";
import { buildFilter, FILTER_SWITCHES, FILTER_VALUES } from "./audit_filter.ts";
import { printable } from "./audit_show.ts";

const TOP_COMMANDS = 10;

interface ClientStats {
  calls: number;
  refused: number;
  durations: number[];
}

/** Nearest-rank percentile of sorted `values`; null when empty. */
export function percentile(sorted: readonly number[], p: number): number | null {
  if (sorted.length === 0) return null;
  const rank = Math.max(1, Math.ceil((p / 100) * sorted.length));
  return sorted[rank - 1]!;
}

function countInto(map: Map<string, number>, key: string): void {
  map.set(key, (map.get(key) ?? 0) + 1);
}

function byCount(map: ReadonlyMap<string, number>): [string, number][] {
  return [...map].sort((a, b) => b[1] - a[1] || (a[0] < b[0] ? -1 : 1));
}

/** Accumulates rows into the numbers `stats` prints. */
export class CallStats {
  calls = 0;
  allowed = 0;
  refused = 0;
  explained = 0;
  readonly refusals = new Map<string, number>();
  readonly results = new Map<string, number>();
  readonly commands = new Map<string, number>();
  readonly clients = new Map<string, ClientStats>();
  readonly durations: number[] = [];

  add(row: CallRow): void {
    if (row.explain) {
      this.explained++;
      return;
    }
    this.calls++;
    const client = this.clients.get(row.client) ?? { calls: 0, refused: 0, durations: [] };
    this.clients.set(row.client, client);
    client.calls++;
    countInto(this.commands, row.command.trim().split(/\s+/, 1)[0] || "(empty)");
    if (row.verdict === "deny") {
      this.refused++;
      client.refused++;
      countInto(this.refusals, row.code ?? "UNKNOWN");
      return;
    }
    this.allowed++;
    countInto(this.results, row.code ?? "no outcome");
    if (row.durationMs !== null) {
      this.durations.push(row.durationMs);
      client.durations.push(row.durationMs);
    }
  }

  /** The summary as plain data (what `--json` prints). */
  summary(): Record<string, unknown> {
    const sorted = [...this.durations].sort((a, b) => a - b);
    return {
      calls: this.calls,
      allowed: this.allowed,
      refused: this.refused,
      explained: this.explained,
      refusals_by_code: Object.fromEntries(byCount(this.refusals)),
      results_by_code: Object.fromEntries(byCount(this.results)),
      duration_ms: { p50: percentile(sorted, 50), p95: percentile(sorted, 95) },
      top_commands: byCount(this.commands).slice(0, TOP_COMMANDS).map(([command, calls]) => ({
        command,
        calls,
      })),
      clients: [...this.clients].sort((a, b) => b[1].calls - a[1].calls).map(([client, s]) => {
        const d = [...s.durations].sort((a, b) => a - b);
        return {
          client,
          calls: s.calls,
          refused: s.refused,
          p50_ms: percentile(d, 50),
          p95_ms: percentile(d, 95),
        };
      }),
    };
  }
}

function ms(value: unknown): string {
  return typeof value === "number" ? `${Math.round(value)} ms` : "-";
}

/** The summary as text for people. */
export function formatStats(s: Record<string, unknown>): string {
  const lines: string[] = [];
  lines.push(
    `calls: ${s.calls} (${s.allowed} allowed, ${s.refused} refused); explain_command: ${s.explained}`,
  );
  const refusals = Object.entries(s.refusals_by_code as Record<string, number>);
  lines.push(`refusals by code:${refusals.length === 0 ? " none" : ""}`);
  for (const [code, n] of refusals) lines.push(`  ${code.padEnd(24)} ${n}`);
  const results = Object.entries(s.results_by_code as Record<string, number>);
  lines.push(`results of allowed calls:${results.length === 0 ? " none" : ""}`);
  for (const [code, n] of results) lines.push(`  ${code.padEnd(24)} ${n}`);
  const d = s.duration_ms as { p50: number | null; p95: number | null };
  lines.push(`duration of allowed calls: p50 ${ms(d.p50)}, p95 ${ms(d.p95)}`);
  lines.push("top commands:");
  for (const { command, calls } of s.top_commands as { command: string; calls: number }[]) {
    lines.push(
      `  ${String(calls).padStart(6)}  ${printable(command)}`,
    );
  }
  lines.push("per client:");
  lines.push(
    `  ${"CLIENT".padEnd(24)} ${"CALLS".padStart(6)} ${"REFUSED".padStart(8)} P50      P95`,
  );
  for (const c of s.clients as Record<string, unknown>[]) {
    lines.push(
      `  ${String(c.client).padEnd(24)} ${String(c.calls).padStart(6)} ${
        String(c.refused).padStart(8)
      } ${ms(c.p50_ms).padEnd(8)} ${ms(c.p95_ms)}`,
    );
  }
  return lines.join("\n");
}

/** `htmcp audit stats FILE... [filters] [--json]`. @returns the exit code */
export async function runStats(argv: readonly string[]): Promise<number> {
  const parsed = parseArgs(argv, {
    values: [...FILTER_VALUES],
    switches: [...FILTER_SWITCHES, "--json"],
  });
  if (!parsed.ok) {
    console.error(parsed.message);
    return 2;
  }
  const files = parsed.args.positionals;
  if (files.length === 0) {
    console.error("Usage: htmcp audit stats FILE... [filters] [--json]");
    return 2;
  }
  const built = buildFilter(parsed.args);
  if (!built.ok) {
    console.error(built.message);
    return 2;
  }
  const readStats: ReadStats = { bytes: 0, lines: 0, unreadable: 0 };
  const calls = new CallAssembler();
  const stats = new CallStats();
  const add = (row: CallRow) => {
    if (built.filter(row)) stats.add(row);
  };
  // Several files are one log read in the order given (a rotated series).
  for (const file of files) {
    let log: Deno.FsFile;
    try {
      log = await Deno.open(file, { read: true });
    } catch (error) {
      console.error(`Cannot read the audit log "${file}": ${(error as Error).message}`);
      return 1;
    }
    for await (const record of recordsFrom(log.readable, readStats)) calls.add(record).forEach(add);
  }
  calls.finish().forEach(add);
  const summary = stats.summary();
  console.log(parsed.args.switches.has("--json") ? JSON.stringify(summary) : formatStats(summary));
  if (readStats.unreadable > 0) {
    console.error(`${readStats.unreadable} of ${readStats.lines} lines were not audit records.`);
  }
  return 0;
}
