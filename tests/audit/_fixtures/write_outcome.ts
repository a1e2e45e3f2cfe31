/**
 * Fixture: opens the audit log at ARGS[0] (closed mode), writes an attempt
 * and then its outcome, and then, by ARGS[1]:
 * - "attempt": at once writes the next call's attempt, prints `attempt` and
 *   exits (the outcome's fdatasync is that attempt's);
 * - "quiet": writes nothing more, waits ARGS[2] ms, prints `quiet` and exits
 *   without closing the log (the deferred-sync timer's fdatasync);
 * - "close": closes the log at once, prints `closed` and exits.
 * Each printed line is one write(2) to stdout, so strace orders it.
 */
import { AuditLog } from "../../../src/audit/mod.ts";
import { attemptFields, outcomeFields } from "../_helpers.ts";

const [path, then, waitMs] = Deno.args;
if (path === undefined || !["attempt", "quiet", "close"].includes(then ?? "")) {
  throw new TypeError("usage: write_outcome.ts PATH attempt|quiet|close [MS]");
}
const opened = await AuditLog.open(path, "closed", { redact: (s) => s });
if (!opened.ok) throw new Error(opened.reason);
const log = opened.log;
const say = (line: string) => Deno.stdout.writeSync(new TextEncoder().encode(`${line}\n`));
if (!(await log.writeAttempt(attemptFields())).ok) throw new Error("attempt not written");
if (!(await log.writeOutcome(outcomeFields())).ok) throw new Error("outcome not written");
if (then === "attempt") {
  if (!(await log.writeAttempt(attemptFields())).ok) throw new Error("attempt not written");
  say("attempt");
  await log.close();
} else if (then === "quiet") {
  await new Promise((resolve) => setTimeout(resolve, Number(waitMs ?? "200")));
  say("quiet");
  Deno.exit(0);
} else {
  await log.close();
  say("closed");
}
