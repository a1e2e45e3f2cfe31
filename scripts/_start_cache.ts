/**
 * The installed command's start cache: what lets `htmcp` start the server
 * without running the launcher (a whole Deno process that loads the policy
 * only to print the server's flags) when nothing the launcher looked at has
 * changed since it last ran.
 *
 * An entry is a POSIX shell file the installed script sources. It holds:
 *
 * - `htmcp_witness`, a function that looks at every fact the launcher run
 *   looked at (`_start_record.ts`), the same way for the same fact: the
 *   working folder, each variable's value (or that it is unset), `stat` and
 *   `stat -L` of each path looked up, `realpath -e` and `readlink` of each
 *   path resolved, the identity, size and times of each file read
 *   (`renderWitness` says how). Errors are part of what it prints, so a path
 *   that appears, vanishes or turns unreadable changes it;
 * - `htmcp_seen`, what that function printed when the entry was written;
 * - `htmcp_start`, the start the launcher printed.
 *
 * The script reuses `htmcp_start` only when `htmcp_witness` prints exactly
 * `htmcp_seen` again; otherwise it runs the launcher, which writes the entry
 * anew. The launcher writes an entry only when two runs of its computation,
 * each followed by the witness, agree on the start, the facts and the
 * witness, so a file changed during a run is not frozen into an entry.
 *
 * What it cannot widen: the server computes its own permission set from the
 * policy at every start and compares it with what it was granted
 * (`permissions/confine.ts`); a cached start (`HTMCP_START_CACHED=1`) that
 * is broader or narrower than that set is refused, so a stale entry can cost
 * a start, never a grant. What it must be trusted with: the script sources
 * the entry, so the entry's folder (`start/` in the installation, mode 0700)
 * is as sensitive as the script itself; the script reads only an entry it
 * owns in a folder it owns.
 *
 * @module
 */
import { join } from "../src/path/mod.ts";
import type { StartFact } from "./_start_record.ts";
import { shQuote } from "./_sh_quote.ts";

/** Entries kept per installation; the oldest beyond this are removed. */
const MAX_ENTRIES = 16;

/** The tools the witness runs, by absolute path (the user's PATH plays no part). */
export interface WitnessTools {
  readonly stat: string;
  readonly realpath: string;
  readonly readlink: string;
  readonly sha256sum: string;
}

/** Where Debian and most distributions keep coreutils. */
export const COREUTILS: WitnessTools = {
  stat: "/usr/bin/stat",
  realpath: "/usr/bin/realpath",
  readlink: "/usr/bin/readlink",
  sha256sum: "/usr/bin/sha256sum",
};

/** How `stat` prints each field of `Deno.FileInfo` (the type, `%F`, is always printed). */
const STAT_SPECIFIERS: ReadonlyMap<string, string> = new Map([
  ["size", "%s"],
  ["mtime", "%y"],
  ["atime", "%x"],
  ["birthtime", "%w"],
  ["ctime", "%z"],
  ["dev", "%d"],
  ["ino", "%i"],
  ["mode", "%f"],
  ["nlink", "%h"],
  ["uid", "%u"],
  ["gid", "%g"],
  ["rdev", "%t:%T"],
  ["blksize", "%o"],
  ["blocks", "%b"],
]);

/** `stat`'s format for `fields`: the name, the type, then each field. */
function statFormat(fields: ReadonlySet<string>): string {
  const specifiers = [...fields].sort().flatMap((field) => {
    const specifier = STAT_SPECIFIERS.get(field);
    return specifier === undefined ? [] : [specifier];
  });
  return ["%n", "%F", ...specifiers].join("|") + "\\n";
}

/**
 * What tells a file's content apart without reading it: its identity,
 * size, and modification and change times (nanoseconds). A write changes
 * both times; a file put in its place is another inode; the change time
 * cannot be set back.
 */
const CONTENT_FORMAT = "%n|%d|%i|%s|%y|%z\\n";

/** A stat field a file's content determines: a content fact already covers it. */
const CONTENT_FIELDS: ReadonlySet<string> = new Set(["size", "blocks"]);

/**
 * The witness function for \`facts\`: shell text defining \`htmcp_witness\`,
 * which prints one stable text for the facts as they are when it runs.
 *
 * A start spends a few milliseconds per program the witness runs, so it runs
 * at most one \`stat\` per kind of look-up, one for the files read, one
 * \`realpath\` (and a \`readlink\` in the rare run that read a link):
 *
 * - a stat prints the type and the fields the launcher read of it, one
 *   format for every path of its kind (a field some path's answer was read
 *   for is printed for all: stricter, never laxer); a log file's size and
 *   times, which change at every start while the launcher only asks whether
 *   it is a file, are left out unless read;
 * - a file read is told apart by its identity, size and times
 *   (\`CONTENT_FORMAT\`), not hashed; one under \`/proc\` or \`/sys\` (the
 *   descriptor limit), whose times say nothing, is printed by the shell's
 *   own \`read\`, no program at all.
 *
 * @param facts What a launcher run looked at.
 * @param tools Where the witness's tools are.
 * @returns The function's definition.
 */
export function renderWitness(
  facts: readonly StartFact[],
  tools: WitnessTools = COREUTILS,
): string {
  const lines: string[] = [];
  if (facts.some((fact) => fact.kind === "cwd")) lines.push("pwd -P");
  for (const name of facts.flatMap((fact) => fact.kind === "env" ? [fact.name] : []).sort()) {
    // "NAME=" when unset, "NAME=+value" when set (even to ""): the two differ.
    lines.push(`printf '%s=%s%s\\n' ${name} "\${${name}++}" "\${${name}-}"`);
  }
  // Each command's errors are part of the text, and a failure never ends the
  // function (the script runs with \`set -e\`).
  const run = (command: string, paths: readonly string[]) => {
    if (paths.length === 0) return;
    const quoted = [...new Set(paths)].sort().map(shQuote).join(" ");
    lines.push(`${command} -- ${quoted} 2>&1 || echo "failed $?"`);
  };
  const read = facts.flatMap((fact) => fact.kind === "content" ? [fact.path] : []);
  const pseudo = (path: string) => /^\/(proc|sys)\//.test(path);
  for (const kind of ["lstat", "stat"] as const) {
    const fields = new Set<string>();
    const paths: string[] = [];
    for (const fact of facts) {
      if (fact.kind !== kind) continue;
      paths.push(fact.path);
      const covered = kind === "stat" && read.includes(fact.path) && !pseudo(fact.path);
      for (const field of fact.fields) {
        if (!(covered && CONTENT_FIELDS.has(field))) fields.add(field);
      }
    }
    const follow = kind === "stat" ? " -L" : "";
    run(`${tools.stat}${follow} --printf=${shQuote(statFormat(fields))}`, paths);
  }
  run(`${tools.stat} -L --printf=${shQuote(CONTENT_FORMAT)}`, read.filter((path) => !pseudo(path)));
  for (const path of [...new Set(read.filter(pseudo))].sort()) {
    lines.push(
      `while IFS= read -r line || [ -n "$line" ]; do printf '%s\\n' "$line"; done < ${
        shQuote(path)
      } 2>&1 || echo "failed $?"`,
    );
  }
  const paths = (kind: StartFact["kind"]) =>
    facts.flatMap((fact) => fact.kind === kind && "path" in fact ? [fact.path] : []);
  run(`${tools.realpath} -e`, paths("realpath"));
  run(tools.readlink, paths("readlink"));
  return `htmcp_witness() {\n${lines.map((line) => `  ${line}\n`).join("")}  :\n}\n`;
}

/**
 * Runs a witness function as the installed script will: `/bin/sh`, this
 * process's working folder and environment, `LC_ALL=C` for stable messages.
 *
 * @param witness The function's definition (`renderWitness`).
 * @returns What it printed, or null when the shell could not run it.
 */
export async function runWitness(witness: string): Promise<string | null> {
  const output = await new Deno.Command("/bin/sh", {
    args: ["-c", `${witness}export LC_ALL=C\nhtmcp_witness`],
    stdin: "null",
    stdout: "piped",
    stderr: "null",
  }).output();
  return output.success ? new TextDecoder().decode(output.stdout) : null;
}

/**
 * The entry's text: the witness, what it printed, and the start.
 *
 * @param witness The witness function's definition.
 * @param seen What it printed when the entry was made.
 * @param start The start the launcher printed (a shell fragment).
 * @returns The file's text.
 */
export function renderEntry(witness: string, seen: string, start: string): string {
  return "# An htmcp start, written by its launcher: reused while htmcp_witness prints htmcp_seen.\n" +
    // As the script reads it: \`$(htmcp_witness)\` drops the trailing newlines.
    witness + `htmcp_seen=${shQuote(seen.replace(/\n+$/, ""))}\nhtmcp_start=${shQuote(start)}\n`;
}

/**
 * Writes the entry at `path` (its folder made mode 0700 when missing),
 * atomically (a new file renamed over the old), mode 0600, and removes the
 * oldest entries beyond {@linkcode MAX_ENTRIES}. Best effort: an
 * installation this user cannot write simply runs the launcher each time.
 *
 * @param path The entry's path (`start/<key>` in the installation).
 * @param text The entry (`renderEntry`).
 * @returns Whether it was written.
 */
export async function writeEntry(path: string, text: string): Promise<boolean> {
  const folder = path.slice(0, path.lastIndexOf("/"));
  const temp = `${folder}/.tmp-${Deno.pid}`;
  try {
    await Deno.mkdir(folder, { mode: 0o700 }).catch((error) => {
      if (!(error instanceof Deno.errors.AlreadyExists)) throw error;
    });
    const info = await Deno.lstat(folder);
    // The script refuses a folder it does not own; so does this.
    if (!info.isDirectory || info.uid !== Deno.uid()) return false;
    await Deno.writeTextFile(temp, text, { mode: 0o600, createNew: true });
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
