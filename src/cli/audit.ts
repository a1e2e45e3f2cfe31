/**
 * `htmcp audit verify FILE`: checks the audit log's hash chain and reports the
 * first broken or missing link. Exit 0 when intact, 1 when not, 2 on usage.
 *
 * @module
 */
import { runAuditVerify } from "../audit/mod.ts";

/** @returns The exit code. */
export async function run(argv: readonly string[]): Promise<number> {
  // `show`, `tail` and `stats` read the log for people (audit_show.ts, audit_stats.ts).
  if (argv[0] === "show") return (await import("./audit_show.ts")).runShow(argv.slice(1));
  if (argv[0] === "tail") return (await import("./audit_show.ts")).runTail(argv.slice(1));
  if (argv[0] === "stats") return (await import("./audit_stats.ts")).runStats(argv.slice(1));
  const [sub, file, ...extra] = argv;
  if (sub !== "verify" || file === undefined || extra.length > 0) {
    console.error("Usage: htmcp audit verify FILE");
    return 2;
  }
  return await runAuditVerify(file);
}
