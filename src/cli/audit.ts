/**
 * `htmcp audit verify FILE...`: checks the audit log's hash chain (or a
 * rotated series of files, oldest first) and reports the first broken or
 * missing link. Exit 0 when intact, 1 when not, 2 on usage or an unreadable
 * file, 3 when intact but the log recorded a problem (see `verify_file.ts`).
 *
 * `htmcp audit head FILE`: prints the log's chain head (`seq=N sha256=H`) to
 * copy somewhere the server cannot write.
 *
 * @module
 */
import { runAuditHead, runAuditVerify } from "../audit/mod.ts";

const USAGE =
  "Usage: htmcp audit verify FILE... (a rotated series oldest first) | htmcp audit head FILE";

/** @returns The exit code. */
export async function run(argv: readonly string[]): Promise<number> {
  // `show`, `tail` and `stats` read the log for people (audit_show.ts, audit_stats.ts).
  if (argv[0] === "show") return (await import("./audit_show.ts")).runShow(argv.slice(1));
  if (argv[0] === "tail") return (await import("./audit_show.ts")).runTail(argv.slice(1));
  if (argv[0] === "stats") return (await import("./audit_stats.ts")).runStats(argv.slice(1));
  const [sub, ...files] = argv;
  const bad = files.length === 0 || files.some((file) => file.startsWith("-"));
  if (sub === "verify" && !bad) return await runAuditVerify(files);
  if (sub === "head" && !bad && files.length === 1) return await runAuditHead(files[0]!);
  console.error(USAGE);
  return 2;
}
