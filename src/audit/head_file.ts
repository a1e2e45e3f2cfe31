/**
 * `htmcp audit head FILE`: prints the chain head (last complete record's
 * `seq` and line hash) of a log, to be stored somewhere the server cannot
 * write. Reads only the file's tail, so it is instant on a large log; a torn
 * last line (a write in progress, or a crash) is skipped, as the writer does.
 *
 * @module
 */

import { readChainTail } from "./tail.ts";

/**
 * Prints the chain head of the log at `path` as `seq=N sha256=HEX`, the
 * line an operator pins elsewhere to detect a later cut of the log's end.
 *
 * @param path the log file
 * @param print receives the one output line (default: stdout)
 * @returns 0 when printed, 2 when the file cannot be read as a log
 * @example
 * ```ts
 * await runAuditHead("/var/log/htmcp/audit.jsonl"); // seq=1234 sha256=9f2c...
 * ```
 */
export async function runAuditHead(
  path: string,
  print: (line: string) => void = (line) => console.log(line),
): Promise<number> {
  let file: Deno.FsFile;
  try {
    file = await Deno.open(path, { read: true });
  } catch (error) {
    const message = error instanceof Error ? error.message : String(error);
    print(`Cannot read the audit log "${path}": ${message}.`);
    return 2;
  }
  try {
    const read = await readChainTail(file, path);
    if (!read.ok) {
      print(read.reason);
      return 2;
    }
    print(`seq=${read.tail.lastSeq} sha256=${read.tail.lastHash}`);
    return 0;
  } finally {
    file.close();
  }
}
