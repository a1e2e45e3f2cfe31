/**
 * Fixture: opens the audit log at ARGS[0] in fail mode ARGS[1], writes one
 * attempt, prints `{"open":...,"write":...}` as one stdout line, then either
 * exits (ARGS[2] = "exit") or hangs like a running command (ARGS[2] = "hang")
 * until the test kills it.
 */
import { AuditLog } from "../../../src/audit/mod.ts";

const [path, failMode, then] = Deno.args;
if (path === undefined || (failMode !== "closed" && failMode !== "open")) {
  throw new TypeError("usage: write_attempt.ts PATH closed|open exit|hang");
}
const opened = await AuditLog.open(path, failMode, { redact: (s) => s });
if (!opened.ok) {
  console.log(JSON.stringify({ open: opened, write: null }));
  Deno.exit(2);
}
const written = await opened.log.writeAttempt({
  call_id: "call-killed-mid-command",
  tool: "run_command",
  client_id: null,
  command_raw: "sleep 100",
  argv: ["sleep", "100"],
  cwd: "/srv/jail",
  verdict: "allow",
  code: null,
  reason: 'The command "sleep" is allowlisted.',
});
// One write(2) of the whole line, so strace shows it after the fdatasync.
Deno.stdout.writeSync(
  new TextEncoder().encode(JSON.stringify({ open: { ok: true }, write: written }) + "\n"),
);
if (then === "hang") {
  setInterval(() => {}, 60_000);
} else {
  await opened.log.close();
}
