/**
 * SIGHUP means "reopen the audit log", as for every daemon that logrotate's
 * `postrotate` signals: it never stops the server (Deno's default for SIGHUP
 * is to exit with 129, which would end every running call unaudited).
 *
 * @module
 */

import type { AuditLog } from "./log.ts";

/**
 * Makes SIGHUP call `log.reopen()` until the returned function is called.
 *
 * @param owner holds the server's audit log (`audit`), read at each signal
 * @param warn receives one line when the reopened log is still unwritable (default: stderr)
 * @returns a function that removes the listener
 * @example
 * ```ts
 * import { AuditLog, reopenAuditOnSighup } from "./mod.ts";
 * const path = `${await Deno.makeTempDir()}/audit.jsonl`;
 * const opened = await AuditLog.open(path, "closed", { redact: (text) => text });
 * if (!opened.ok) throw new Error(opened.reason);
 * const stop = reopenAuditOnSighup({ audit: opened.log });
 * // ... serve; logrotate's postrotate sends SIGHUP ...
 * stop();
 * await opened.log.close();
 * ```
 */
export function reopenAuditOnSighup(
  owner: { readonly audit: AuditLog },
  warn: (line: string) => void = (line) => console.error(line),
): () => void {
  const onHangup = () => {
    owner.audit.reopen().then((result) => {
      if (result.ok) warn(`htmcp: SIGHUP: audit log "${owner.audit.path}" checked and reopened.`);
      else {warn(
          `htmcp: SIGHUP: audit log "${owner.audit.path}" still unwritable: ${result.reason}`,
        );}
    });
  };
  Deno.addSignalListener("SIGHUP", onHangup);
  return () => Deno.removeSignalListener("SIGHUP", onHangup);
}
