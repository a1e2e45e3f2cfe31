/**
 * `htmcp audit verify FILE...`: checks the audit log's hash chain (or a
 * rotated series of files, oldest first) and reports the first broken or
 * missing link. Exit 0 when intact, 1 when not, 2 on usage or an unreadable
 * file, 3 when intact but the log recorded a problem (see `verify_file.ts`).
 *
 * @module
 */
import { runAuditVerify } from "../audit/mod.ts";

/** @returns The exit code. */
export async function run(argv: readonly string[]): Promise<number> {
  const [sub, ...files] = argv;
  if (sub !== "verify" || files.length === 0 || files.some((file) => file.startsWith("-"))) {
    console.error("Usage: htmcp audit verify FILE... (a rotated series oldest first)");
    return 2;
  }
  return await runAuditVerify(files);
}
