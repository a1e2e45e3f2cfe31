/**
 * `htmcp audit`: `verify FILE` checks the audit log's hash chain and reports
 * the first broken or missing link (exit 0 when intact, 1 when not, 2 on
 * usage); `show`, `tail` and `stats` read the log for people
 * (`audit_show.ts`, `audit_stats.ts`).
 *
 * @module
 */
import { runAuditVerify } from "../audit/mod.ts";

const USAGE = "Usage: htmcp audit verify FILE | show FILE | tail [-f] [-n N] FILE | stats FILE";

/** @returns The exit code. */
export async function run(argv: readonly string[]): Promise<number> {
  const [sub, ...rest] = argv;
  if (sub === "show") return (await import("./audit_show.ts")).runShow(rest);
  if (sub === "tail") return (await import("./audit_show.ts")).runTail(rest);
  if (sub === "stats") return (await import("./audit_stats.ts")).runStats(rest);
  const [file, ...extra] = rest;
  if (sub !== "verify" || file === undefined || extra.length > 0) {
    console.error(USAGE);
    return 2;
  }
  return await runAuditVerify(file);
}
