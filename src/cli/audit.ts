/**
 * `htmcp audit verify FILE...`: checks the audit log's hash chain (or a
 * rotated series of files, oldest first) and reports the first broken or
 * missing link. Exit 0 when intact, 1 when not, 2 on usage or an unreadable
 * file, 3 when intact but the log recorded a problem (see `verify_file.ts`).
 * With `--checkpoints FILE --key KEY` it also holds the log against its signed
 * checkpoints and names the records missing at its end (`verify_checkpoints.ts`).
 *
 * `htmcp audit head FILE`: prints the log's chain head (`seq=N sha256=H`) to
 * copy somewhere the server cannot write.
 *
 * `htmcp audit key [--policy FILE]`: prints the public key that signs the
 * checkpoints (creating the key pair in the state dir on first use), to copy
 * elsewhere and give to `verify --key`.
 *
 * @module
 */
import { runAuditHead, runAuditVerify, runCheckpointVerify } from "../audit/mod.ts";
import { parseArgs } from "./args.ts";

const USAGE = "Usage: htmcp audit verify [--checkpoints FILE --key KEYFILE] FILE... " +
  "(a rotated series oldest first) | htmcp audit head FILE | htmcp audit key [--policy FILE]";

/** @returns The exit code. */
export async function run(argv: readonly string[]): Promise<number> {
  // `show`, `tail` and `stats` read the log for people (audit_show.ts, audit_stats.ts).
  if (argv[0] === "show") return (await import("./audit_show.ts")).runShow(argv.slice(1));
  if (argv[0] === "tail") return (await import("./audit_show.ts")).runTail(argv.slice(1));
  if (argv[0] === "stats") return (await import("./audit_stats.ts")).runStats(argv.slice(1));
  if (argv[0] === "key") return (await import("./audit_key.ts")).runKey(argv.slice(1));
  const [sub, ...rest] = argv;
  if (sub === "verify") return await verify(rest);
  const bad = rest.length === 0 || rest.some((file) => file.startsWith("-"));
  if (sub === "head" && !bad && rest.length === 1) return await runAuditHead(rest[0]!);
  console.error(USAGE);
  return 2;
}

async function verify(args: readonly string[]): Promise<number> {
  const parsed = parseArgs(args, { values: ["--checkpoints", "--key"] });
  if (!parsed.ok) {
    console.error(`htmcp: ${parsed.message}`);
    console.error(USAGE);
    return 2;
  }
  const files = [...parsed.args.positionals, ...(parsed.args.rest ?? [])];
  const checkpoints = parsed.args.values.get("--checkpoints");
  const key = parsed.args.values.get("--key");
  if (files.length === 0) {
    console.error(USAGE);
    return 2;
  }
  if (checkpoints === undefined && key === undefined) return await runAuditVerify(files);
  if (checkpoints === undefined || key === undefined) {
    // A checkpoint is only evidence when checked against a key kept apart
    // from the server: there is no default key to fall back on.
    console.error(
      "htmcp: --checkpoints and --key go together (the key that `htmcp audit key` printed).",
    );
    return 2;
  }
  return await runCheckpointVerify({ logs: files, checkpoints, key });
}
