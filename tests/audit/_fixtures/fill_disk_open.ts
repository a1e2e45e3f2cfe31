/**
 * Fixture for the open-mode disk-full test, run inside `bwrap` with a small
 * tmpfs at ARGS[0]: writes a record, fills the filesystem, writes five
 * records that must fail (the calls would run: open mode), frees the space,
 * writes again, and prints the results and the log.
 */
import { AuditLog } from "../../../src/audit/mod.ts";

const [dir] = Deno.args;
if (dir === undefined) throw new TypeError("usage: fill_disk_open.ts DIR");
const path = `${dir}/audit.jsonl`;
const opened = await AuditLog.open(path, "open", { redact: (s) => s, warn: () => {} });
if (!opened.ok) throw new Error(opened.reason);
const log = opened.log;
const attempt = (command: string) =>
  log.writeAttempt({
    call_id: crypto.randomUUID(),
    tool: "run_command",
    client_id: null,
    command_raw: command,
    argv: command.split(" "),
    cwd: null,
    verdict: "allow",
    code: null,
    reason: "allowed",
  });

const before = await attempt("ls -la");
const filler = await Deno.open(`${dir}/filler`, { write: true, create: true });
const block = new Uint8Array(4096);
try {
  while (true) await filler.write(block);
} catch {
  // ENOSPC: the disk is full
}
filler.close();
const whileFull = [];
for (let i = 0; i < 5; i++) whileFull.push(await attempt(`echo lost-${i} ${"x".repeat(5000)}`));
await Deno.remove(`${dir}/filler`);
const after = await attempt("echo space again");
await log.close();

console.log(JSON.stringify({ before, whileFull, after }));
console.log(await Deno.readTextFile(path));
