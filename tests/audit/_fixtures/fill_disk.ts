/**
 * Fixture for the disk-full test, run inside `bwrap` with a small tmpfs at
 * ARGS[0]: writes records, fills the filesystem, writes an attempt that must
 * fail, frees the space, writes again, and prints the results and the log.
 */
import { AuditLog } from "../../../src/audit/mod.ts";

const [dir] = Deno.args;
if (dir === undefined) throw new TypeError("usage: fill_disk.ts DIR");
const path = `${dir}/audit.jsonl`;
const warnings: string[] = [];
const opened = await AuditLog.open(path, "closed", {
  redact: (s) => s,
  warn: (line) => warnings.push(line),
});
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

const before = [await attempt("ls -la"), await attempt("pwd")];

// Fill every free page of the filesystem.
const filler = await Deno.open(`${dir}/filler`, { write: true, create: true });
const block = new Uint8Array(4096);
try {
  while (true) await filler.write(block);
} catch {
  // ENOSPC: the disk is full
}
filler.close();

// Larger than any page remainder, so part of it may land before ENOSPC.
const whileFull = await attempt(`echo ${"x".repeat(6000)}`);
await Deno.remove(`${dir}/filler`);
const after = await attempt("echo space again");
await log.close();

console.log(JSON.stringify({ before, whileFull, after, warnings }));
console.log(await Deno.readTextFile(path));
