/**
 * Fixture: writes records to the log at ARGS[0] without pause, eight calls in
 * flight at a time, some spanning several pages, until the test kills it.
 * Prints one line once the first records are on disk.
 */
import { AuditLog } from "../../../src/audit/mod.ts";

const [path] = Deno.args;
if (path === undefined) throw new TypeError("usage: write_forever.ts PATH");
const opened = await AuditLog.open(path, "closed", { redact: (s) => s });
if (!opened.ok) throw new Error(opened.reason);
const log = opened.log;
let announced = false;
let round = 0;
while (true) {
  round += 1;
  const writes = Array.from({ length: 8 }, (_, index) =>
    log.writeAttempt({
      call_id: `${round}-${index}`,
      tool: "run_command",
      client_id: null,
      command_raw: `echo ${"w".repeat(index === 0 ? 20_000 : 10)}`,
      argv: null,
      cwd: null,
      verdict: "allow",
      code: null,
      reason: "allowed",
    }));
  const results = await Promise.all(writes);
  if (results.some((result) => !result.ok)) throw new Error(JSON.stringify(results));
  if (!announced) {
    announced = true;
    console.log("writing");
  }
}
