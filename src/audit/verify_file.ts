/**
 * `htmcp audit verify FILE...`: verifies a log file, or a rotated series of
 * them oldest first (`.gz` files are decompressed as they stream), and prints
 * one verdict line per file, plus one for the series when there are several.
 *
 * Exit codes: 0 the chain is intact; 3 intact, but the log itself recorded a
 * problem: a write cut short and closed off with `chain_reset`, records lost
 * in open mode (`records_dropped`), a log found replaced or truncated
 * (`segment`), or records missing between two files of a series, which the
 * later file's `segment` record explains (look at those lines); 1 the chain is
 * broken (tampering or corruption); 2 a file cannot be read.
 *
 * @module
 */

import { ChainVerifier, type SegmentNote, type VerifyReport } from "./verify.ts";

/** Exit code: intact. */
export const VERIFY_INTACT = 0;
/** Exit code: a link is broken or missing. */
export const VERIFY_BROKEN = 1;
/** Exit code: the file could not be read. */
export const VERIFY_UNREADABLE = 2;
/** Exit code: intact, with problems the log recorded itself (see the module doc). */
export const VERIFY_INTACT_WITH_RESETS = 3;

/** Findings that mean a writer saw its log tampered with or cut, not rotated. */
const ALARMING_FINDINGS: ReadonlySet<string> = new Set([
  "file_replaced",
  "file_truncated",
  "file_removed",
]);

type Verified =
  | { readonly ok: true; readonly report: VerifyReport & { ok: true } }
  | { readonly ok: false; readonly code: number };

async function verifyOne(
  path: string,
  print: (line: string) => void,
  inSeries: boolean,
): Promise<Verified> {
  const verifier = new ChainVerifier({ allowDisplacedStart: inSeries });
  try {
    const file = await Deno.open(path, { read: true });
    // The stream closes the file when it ends or is cancelled.
    const stream = path.endsWith(".gz")
      ? file.readable.pipeThrough(new DecompressionStream("gzip"))
      : file.readable;
    for await (const chunk of stream) verifier.push(chunk);
  } catch (error) {
    const message = error instanceof Error ? error.message : String(error);
    print(`Cannot verify the audit log "${path}": ${message}.`);
    return { ok: false, code: VERIFY_UNREADABLE };
  }
  const report = verifier.finish();
  if (!report.ok) {
    const seq = report.seq === null ? "" : ` (seq ${report.seq})`;
    print(`Audit log "${path}" is BROKEN at line ${report.line}${seq}: ${report.problem}.`);
    return { ok: false, code: VERIFY_BROKEN };
  }
  print(describe(path, report));
  return { ok: true, report };
}

function segmentText(note: SegmentNote): string {
  return `line ${note.line} (${note.found}; the writer knew up to seq ${note.previousSeq}, ` +
    `sha256 ${note.previousSha256})`;
}

function describe(path: string, report: VerifyReport & { ok: true }): string {
  const summary = `${report.records} records, head sha256 ${report.head}`;
  const notes: string[] = [];
  if (report.resets.length > 0) {
    const places = report.resets.map((reset) =>
      `line ${reset.damagedLine} (${reset.damagedBytes} damaged bytes, chain_reset at line ${reset.line})`
    ).join("; ");
    notes.push(`${report.resets.length} chain reset(s) where a write was cut off: ${places}`);
  }
  if (report.displacedStart !== null) {
    notes.push(
      `a first record (seq ${report.displacedStart}) that a truncation displaced, to be explained by the next file`,
    );
  }
  const alarming = report.segments.filter((note) => ALARMING_FINDINGS.has(note.found));
  if (alarming.length > 0) {
    notes.push(
      `${alarming.length} boundary record(s) where a writer found the log replaced or truncated: ` +
        alarming.map(segmentText).join("; "),
    );
  }
  if (report.dropped.length > 0) {
    const total = report.dropped.reduce((sum, note) => sum + note.count, 0);
    notes.push(
      `${total} record(s) could not be written (audit_fail_mode "open"): ` +
        report.dropped.map((note) =>
          `line ${note.line} (${note.count} between ${note.firstTs} and ${note.lastTs})`
        ).join("; "),
    );
  }
  const continues = report.continues !== null && !ALARMING_FINDINGS.has(report.continues.found)
    ? ` It continues a previous file (${report.continues.found}) whose head was seq ${report.continues.previousSeq}, sha256 ${report.continues.previousSha256}.`
    : "";
  if (notes.length === 0) return `Audit log "${path}" is intact: ${summary}.${continues}`;
  return `Audit log "${path}" is intact with ${notes.join("; ")}; ${summary}.${continues}`;
}

function isNotable(report: VerifyReport & { ok: true }): boolean {
  return report.resets.length > 0 || report.dropped.length > 0 || report.displacedStart !== null ||
    report.segments.some((note) => ALARMING_FINDINGS.has(note.found));
}

/**
 * Verifies the audit log at `path` (or a series, oldest first), streaming each file in chunks.
 *
 * @param paths the log file, or the files of a rotated series oldest first
 * @param print receives each human-readable verdict line (default: stdout)
 * @returns the exit code (see the module doc)
 * @example
 * ```ts
 * Deno.exit(await runAuditVerify(["audit.jsonl.2.gz", "audit.jsonl.1", "audit.jsonl"]));
 * ```
 */
export async function runAuditVerify(
  paths: string | readonly string[],
  print: (line: string) => void = (line) => console.log(line),
): Promise<number> {
  const files = typeof paths === "string" ? [paths] : paths;
  let code = VERIFY_INTACT;
  let previous: { path: string; report: VerifyReport & { ok: true } } | null = null;
  const gaps: string[] = [];
  for (const path of files) {
    const verified = await verifyOne(path, print, files.length > 1);
    if (!verified.ok) return verified.code;
    const report = verified.report;
    const displaced = previous?.report.displacedStart ?? null;
    if (
      displaced !== null && report.records > 0 &&
      !report.segments.some((note) => note.firstDisplacedSeq === displaced)
    ) {
      print(
        `Audit series is BROKEN at "${
          previous!.path
        }": its first record (seq ${displaced}) continues ` +
          `another file, and neither it nor "${path}" has the segment record that explains it.`,
      );
      return VERIFY_BROKEN;
    }
    if (isNotable(report)) code = VERIFY_INTACT_WITH_RESETS;
    if (previous !== null && report.records > 0) {
      const link = report.continues;
      const before = previous.report;
      if (link === null) {
        print(
          `Audit series is BROKEN at "${path}": it starts a new chain instead of continuing "${previous.path}".`,
        );
        return VERIFY_BROKEN;
      }
      const linked = link.previousSeq === before.lastSeq && link.previousSha256 === before.head;
      if (!linked) {
        if (link.previousSeq <= before.lastSeq) {
          print(
            `Audit series is BROKEN at "${path}": its first record continues seq ${link.previousSeq}, ` +
              `sha256 ${link.previousSha256}, which is not the head of "${previous.path}" ` +
              `(seq ${before.lastSeq}, sha256 ${before.head}).`,
          );
          return VERIFY_BROKEN;
        }
        // The writer knew of records the previous file does not hold: they
        // were lost between the files (copytruncate's window, or removed).
        gaps.push(
          `seq ${
            before.lastSeq + 1
          } to ${link.previousSeq} are missing between "${previous.path}" ` +
            `and "${path}" (${link.found})`,
        );
        code = VERIFY_INTACT_WITH_RESETS;
      }
    }
    // An empty file (logrotate copied it before anything was written) has
    // no head of its own: the next file links to the one before it.
    if (report.records > 0) previous = { path, report };
  }
  const lastDisplaced = previous?.report.displacedStart ?? null;
  if (lastDisplaced !== null) {
    print(
      `Audit series is BROKEN at "${previous!.path}": its first record (seq ${lastDisplaced}) ` +
        "continues another file, and no later file has the segment record that explains it.",
    );
    return VERIFY_BROKEN;
  }
  if (files.length > 1) {
    print(
      gaps.length === 0
        ? `Audit series of ${files.length} files is linked end to end.`
        : `Audit series of ${files.length} files is linked, but records ${gaps.join("; ")}.`,
    );
  }
  return code;
}
