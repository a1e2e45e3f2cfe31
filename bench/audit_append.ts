/**
 * Audit append cost: one record written and fdatasync'd per call, awaited one
 * at a time (the latency a single tool call pays, twice: attempt and outcome),
 * the same records with 16 calls in flight (group commit shares flushes), and
 * two writers on one log, 8 in flight each (each append takes the
 * cross-process folder lock).
 *
 * @module
 */

import { AuditLog } from "../src/audit/mod.ts";

/** Figures from one run. */
export interface AuditAppendFigures {
  /** Mean wall time of one awaited append (write + fdatasync), in ms. */
  readonly msPerRecord: number;
  readonly p50Ms: number;
  readonly p95Ms: number;
  /** Mean wall time per record with 16 appends in flight, in ms. */
  readonly msPerRecordConcurrent: number;
  /** Mean wall time per record with two writers on one log, 8 in flight each, in ms. */
  readonly msPerRecordTwoWriters: number;
}

function percentile(sorted: readonly number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor((sorted.length * p) / 100))]!;
}

/**
 * Appends `n` records to a fresh log in a temp folder (on `dir`'s filesystem
 * when given, else the default temp folder) and times them.
 *
 * @param n records per phase
 * @param dir where to create the temp folder
 * @returns the figures; the temp folder is removed
 */
export async function measureAuditAppend(
  n: number,
  dir?: string,
): Promise<AuditAppendFigures> {
  const folder = await Deno.makeTempDir(dir === undefined ? {} : { dir });
  try {
    const opened = await AuditLog.open(`${folder}/audit.jsonl`, "closed", { redact: (s) => s });
    if (!opened.ok) throw new Error(opened.reason);
    const log = opened.log;
    const attempt = (i: number, writer: AuditLog = log) =>
      writer.writeAttempt({
        call_id: crypto.randomUUID(),
        tool: "run_command",
        client_id: null,
        command_raw: `git log --oneline -n ${i}`,
        argv: ["git", "log", "--oneline", "-n", String(i)],
        cwd: "/srv/jail/project",
        verdict: "allow",
        code: null,
        reason: 'The command "git" is allowlisted.',
      });

    const times: number[] = [];
    for (let i = 0; i < n; i++) {
      const start = performance.now();
      const written = await attempt(i);
      times.push(performance.now() - start);
      if (!written.ok) throw new Error(written.reason);
    }
    const sorted = [...times].sort((a, b) => a - b);

    const concurrentStart = performance.now();
    for (let done = 0; done < n; done += 16) {
      const batch = await Promise.all(
        Array.from({ length: Math.min(16, n - done) }, (_, i) => attempt(done + i)),
      );
      for (const written of batch) if (!written.ok) throw new Error(written.reason);
    }
    const concurrentMs = performance.now() - concurrentStart;

    const other = await AuditLog.open(`${folder}/audit.jsonl`, "closed", { redact: (s) => s });
    if (!other.ok) throw new Error(other.reason);
    const twoStart = performance.now();
    for (let done = 0; done < n; done += 16) {
      const batch = await Promise.all(
        Array.from(
          { length: Math.min(16, n - done) },
          (_, i) => attempt(done + i, i % 2 === 0 ? log : other.log),
        ),
      );
      for (const written of batch) if (!written.ok) throw new Error(written.reason);
    }
    const twoMs = performance.now() - twoStart;
    await other.log.close();
    await log.close();

    return {
      msPerRecord: times.reduce((sum, t) => sum + t, 0) / n,
      p50Ms: percentile(sorted, 50),
      p95Ms: percentile(sorted, 95),
      msPerRecordConcurrent: concurrentMs / n,
      msPerRecordTwoWriters: twoMs / n,
    };
  } finally {
    await Deno.remove(folder, { recursive: true });
  }
}
