/**
 * The installed command's start cache: what lets `htmcp` start the server
 * without running the launcher (a whole Deno process that loads the policy
 * only to print the server's flags) when nothing the launcher looked at has
 * changed since it last ran.
 *
 * `htmcp-start` (`scripts/htmcp_start.c`, built beside the helper at install)
 * decides in one exec, before anything else of the installed script runs.
 * An entry is data, never shell code: the salt (the launcher's hash), the
 * working folder and the arguments it is for; the facts the launcher run
 * looked at (`_start_record.ts`); their reading when the entry was written;
 * and the start the launcher printed. The tool reuses the start only when
 * the entry names exactly this start, and every fact reads the same again
 * (`htmcp-start observe` reads them for the launcher here, the same way):
 * the working folder, each variable's value (or that it is unset), the
 * fields the launcher read of each path it looked up, the canonical path of
 * each it resolved, the identity, size and times of each file it read (the
 * text of a `/proc` or `/sys` file, whose times say nothing).
 *
 * The launcher writes an entry only when two runs of its computation, each
 * followed by a reading, agree on the start, the facts and the reading, so
 * a file changed during a run is not frozen into an entry.
 *
 * What it cannot widen: the server computes its own permission set from the
 * policy at every start and compares it with the flags it was started with
 * (`permissions/confine.ts`); a reused start whose flags are not exactly
 * that set is refused, so a stale entry can cost a start, never a grant.
 * What it must be trusted with: the script evals the start, so an entry is
 * read only when it is this user's own file (no symlink, writable by no one
 * else) in a folder of this user's closed to others (`start/`, mode 0700).
 *
 * @module
 */
import { join } from "../src/path/mod.ts";
import type { StartFact } from "./_start_record.ts";

/** Entries kept per installation; the oldest beyond this are removed. */
const MAX_ENTRIES = 16;

/** The first field of an entry: its format (`htmcp_start.c`'s `MAGIC`). */
const MAGIC = "htmcp-start 1";

const ENCODER = new TextEncoder();

/** NUL-terminated fields, as `htmcp-start` reads them. */
function fields(values: readonly string[]): string {
  if (values.some((value) => value.includes("\0"))) {
    throw new RangeError("A start cache field cannot hold a NUL byte.");
  }
  return values.map((value) => `${value}\0`).join("");
}

/**
 * The facts as `htmcp-start` reads them: their count, then the kind, the
 * argument and, for a stat, the fields read (comma-separated) of each.
 *
 * @param facts What a launcher run looked at.
 * @returns The encoded list.
 * @throws {RangeError} When a path or name holds a NUL byte.
 */
export function encodeFacts(facts: readonly StartFact[]): string {
  const parts = [String(facts.length)];
  for (const fact of facts) {
    const arg = fact.kind === "cwd" ? "" : fact.kind === "env" ? fact.name : fact.path;
    const read = fact.kind === "stat" || fact.kind === "lstat" ? fact.fields.join(",") : "";
    parts.push(fact.kind, arg, read);
  }
  return fields(parts);
}

/**
 * Reads the facts as `htmcp-start check` will: `htmcp-start observe`, in
 * this process's working folder and environment.
 *
 * @param tool The installed `htmcp-start`.
 * @param facts What a launcher run looked at.
 * @returns The reading, or null when the tool could not give one.
 */
export async function observeFacts(
  tool: string,
  facts: readonly StartFact[],
): Promise<string | null> {
  try {
    const child = new Deno.Command(tool, {
      args: ["observe"],
      stdin: "piped",
      stdout: "piped",
      stderr: "null",
    }).spawn();
    const writer = child.stdin.getWriter();
    await writer.write(ENCODER.encode(encodeFacts(facts)));
    await writer.close();
    const output = await child.output();
    return output.success ? new TextDecoder().decode(output.stdout) : null;
  } catch {
    return null;
  }
}

/** What an entry holds. */
export interface StartEntry {
  /** The launcher's hash, which the script passes (`HTMCP_START_SALT`). */
  readonly salt: string;
  /** The working folder (physical), as `getcwd` gives it. */
  readonly cwd: string;
  /** The arguments of the installed command. */
  readonly args: readonly string[];
  readonly facts: readonly StartFact[];
  /** What `observeFacts` read when the entry was made. */
  readonly reading: string;
  /** The start the launcher printed (a shell fragment). */
  readonly start: string;
}

/**
 * The entry's bytes, as `htmcp-start check` reads them.
 *
 * @param entry What it holds.
 * @returns The file's text.
 * @throws {RangeError} When a field holds a NUL byte (such a start is not cached).
 */
export function encodeEntry(entry: StartEntry): string {
  return fields([MAGIC, entry.salt, entry.cwd, String(entry.args.length), ...entry.args]) +
    encodeFacts(entry.facts) + fields([entry.reading, entry.start]);
}

/**
 * Writes the entry at `path` (its folder made, or kept, mode 0700),
 * atomically (a new file renamed over the old), mode 0600, and removes the
 * oldest entries beyond {@linkcode MAX_ENTRIES}. Best effort: an
 * installation this user cannot write simply runs the launcher each time.
 *
 * @param path The entry's path (`start/<key>` in the installation, which `htmcp-start` names).
 * @param text The entry (`encodeEntry`).
 * @returns Whether it was written.
 */
export async function writeEntry(path: string, text: string): Promise<boolean> {
  const folder = path.slice(0, path.lastIndexOf("/"));
  const temp = `${folder}/.tmp-${Deno.pid}`;
  try {
    await Deno.mkdir(folder, { mode: 0o700 }).catch((error) => {
      if (!(error instanceof Deno.errors.AlreadyExists)) throw error;
    });
    await Deno.writeTextFile(temp, text, { mode: 0o600, createNew: true });
    // `htmcp-start` reads only a folder of this user's closed to others (who
    // this user is: the owner of the file just made).
    const info = await Deno.lstat(folder);
    if (!info.isDirectory || info.uid !== (await Deno.lstat(temp)).uid) {
      await Deno.remove(temp);
      return false;
    }
    if (((info.mode ?? 0) & 0o077) !== 0) await Deno.chmod(folder, 0o700);
    await Deno.rename(temp, path);
    await pruneEntries(folder);
    return true;
  } catch {
    await Deno.remove(temp).catch(() => {});
    return false;
  }
}

async function pruneEntries(folder: string): Promise<void> {
  const entries: { path: string; mtime: number }[] = [];
  for await (const entry of Deno.readDir(folder)) {
    if (!entry.isFile || entry.name.startsWith(".")) continue;
    const path = join(folder, entry.name);
    entries.push({ path, mtime: (await Deno.lstat(path)).mtime?.getTime() ?? 0 });
  }
  entries.sort((a, b) => b.mtime - a.mtime);
  for (const old of entries.slice(MAX_ENTRIES)) await Deno.remove(old.path).catch(() => {});
}
