/**
 * `htmcp audit verify FILE`: verifies a log file and prints one verdict line.
 *
 * Exit codes: 0 the chain is intact; 3 intact, but a crash or full disk cut a
 * write short and the log marked it with `chain_reset` (look at those lines);
 * 1 the chain is broken (tampering or corruption); 2 the file cannot be read.
 *
 * @module
 */

import { ChainVerifier } from "./verify.ts";

/** Exit code: intact. */
export const VERIFY_INTACT = 0;
/** Exit code: a link is broken or missing. */
export const VERIFY_BROKEN = 1;
/** Exit code: the file could not be read. */
export const VERIFY_UNREADABLE = 2;
/** Exit code: intact, with damage from cut-off writes closed off by `chain_reset` records. */
export const VERIFY_INTACT_WITH_RESETS = 3;

/**
 * Verifies the audit log at `path`, streaming it in chunks.
 *
 * @param path the log file
 * @param print receives the one human-readable verdict line (default: stdout)
 * @returns the exit code (see the module doc)
 * @example
 * ```ts
 * Deno.exit(await runAuditVerify("/var/log/htmcp/audit.jsonl"));
 * ```
 */
export async function runAuditVerify(
  path: string,
  print: (line: string) => void = (line) => console.log(line),
): Promise<number> {
  const verifier = new ChainVerifier();
  try {
    const file = await Deno.open(path, { read: true });
    // The stream closes the file when it ends or is cancelled.
    for await (const chunk of file.readable) verifier.push(chunk);
  } catch (error) {
    const message = error instanceof Error ? error.message : String(error);
    print(`Cannot verify the audit log "${path}": ${message}.`);
    return VERIFY_UNREADABLE;
  }
  const report = verifier.finish();
  if (!report.ok) {
    const seq = report.seq === null ? "" : ` (seq ${report.seq})`;
    print(`Audit log "${path}" is BROKEN at line ${report.line}${seq}: ${report.problem}.`);
    return VERIFY_BROKEN;
  }
  const summary = `${report.records} records, head sha256 ${report.head}`;
  if (report.resets.length === 0) {
    print(`Audit log "${path}" is intact: ${summary}.`);
    return VERIFY_INTACT;
  }
  const places = report.resets.map((reset) =>
    `line ${reset.damagedLine} (${reset.damagedBytes} damaged bytes, chain_reset at line ${reset.line})`
  ).join("; ");
  print(
    `Audit log "${path}" is intact with ${report.resets.length} chain reset(s) ` +
      `where a write was cut off: ${places}; ${summary}.`,
  );
  return VERIFY_INTACT_WITH_RESETS;
}
