/**
 * `deno run -A bench/audit_read_bench.ts [MB]`: how fast `htmcp audit show`
 * and `stats` read a large log. A log of attempt/outcome pairs shaped like
 * the server's records (refusals and explain records mixed in) is written to
 * a temp file, then read by the same streaming code the commands use, and
 * the MB/s of each pass is printed.
 *
 * @module
 */
import { CallAssembler, type CallRow, recordsFrom } from "../src/cli/audit_calls.ts";
import { RowPrinter } from "../src/cli/audit_show.ts";
import { CallStats } from "../src/cli/audit_stats.ts";

/** Writes about `megabytes` MB of records to `path`; returns the byte count. */
export async function writeSyntheticLog(path: string, megabytes: number): Promise<number> {
  const file = await Deno.open(path, { write: true, create: true, truncate: true });
  const encoder = new TextEncoder();
  let bytes = 0;
  let seq = 0;
  const prev = "0".repeat(64);
  try {
    for (let i = 0; bytes < megabytes * 1e6; i++) {
      const ts = new Date(Date.UTC(2026, 11, 1, 9) + i * 250).toISOString();
      const call = crypto.randomUUID();
      const client = `client-${i % 7}`;
      const lines: unknown[] = [];
      if (i % 9 === 0) {
        lines.push({
          seq: ++seq,
          ts,
          prev,
          kind: "attempt",
          call_id: call,
          tool: "run_command",
          client_id: client,
          command_raw: `rm -rf build/${i}`,
          argv: ["rm", "-rf", `build/${i}`],
          cwd: "/srv/jail",
          verdict: "deny",
          code: "POLICY_DENIED",
          reason: '"rm" is on the denylist.',
        });
      } else {
        lines.push({
          seq: ++seq,
          ts,
          prev,
          kind: "attempt",
          call_id: call,
          tool: "run_command",
          client_id: client,
          command_raw: `grep -rn TODO src/module_${i % 50}.ts`,
          argv: ["grep", "-rn", "TODO", `src/module_${i % 50}.ts`],
          cwd: "/srv/jail",
          verdict: "allow",
          code: null,
          reason: "grep is allowlisted.",
        }, {
          seq: ++seq,
          ts,
          prev,
          kind: "outcome",
          call_id: call,
          tool: "run_command",
          client_id: client,
          code: "OK",
          exit_code: 0,
          duration_ms: 5 + (i % 40),
          stdout_bytes: 120,
          stderr_bytes: 0,
          truncated: false,
        });
      }
      const text = lines.map((line) => JSON.stringify(line)).join("\n") + "\n";
      const chunk = encoder.encode(text);
      bytes += chunk.byteLength;
      await file.write(chunk);
    }
  } finally {
    file.close();
  }
  return bytes;
}

/** Streams `path` through the assembler into `sink`; returns MB/s. */
export async function measureRead(path: string, sink: (row: CallRow) => void): Promise<number> {
  const t0 = performance.now();
  const file = await Deno.open(path);
  const stats = { bytes: 0, lines: 0, unreadable: 0 };
  const calls = new CallAssembler();
  for await (const record of recordsFrom(file.readable, stats)) calls.add(record).forEach(sink);
  calls.finish().forEach(sink);
  return stats.bytes / 1e6 / ((performance.now() - t0) / 1000);
}

if (import.meta.main) {
  const megabytes = Number(Deno.args[0] ?? "50");
  const path = await Deno.makeTempFile({ suffix: ".jsonl" });
  try {
    const bytes = await writeSyntheticLog(path, megabytes);
    await measureRead(path, () => {}); // warm-up: page cache and JIT
    const stats = new CallStats();
    const statsRate = await measureRead(path, (row) => stats.add(row));
    stats.summary();
    let printed = 0;
    const table = new RowPrinter(false, false, (line) => (printed += line.length));
    const tableRate = await measureRead(path, (row) => table.print(row));
    const json = new RowPrinter(true, false, (line) => (printed += line.length));
    const jsonRate = await measureRead(path, (row) => json.print(row));
    console.log(
      `audit read: ${(bytes / 1e6).toFixed(0)} MB log; stats ${statsRate.toFixed(0)} MB/s, ` +
        `show (table) ${tableRate.toFixed(0)} MB/s, show --json ${jsonRate.toFixed(0)} MB/s ` +
        `(${printed} characters formatted)`,
    );
  } finally {
    await Deno.remove(path);
  }
}
