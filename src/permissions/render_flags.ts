/**
 * Renders a `PermissionSet` as `deno run` / `deno compile` flags.
 *
 * Anything not granted is also denied explicitly, so a wrapper that appends a
 * broader `--allow-*` cannot widen it (a `--deny-*` wins over any `--allow-*`,
 * verified on Deno 2.9.6), and `--no-prompt` turns every miss into a
 * `NotCapable` error instead of a question on the operator's terminal.
 *
 * @module
 */
import type { Grant, PermissionSet } from "./types.ts";

/**
 * Hosts Deno lets a program import remote code from with no flag at all. A
 * bare `--deny-import` does not stop them (verified on Deno 2.9.6), and a
 * host without a port does not either; each must be denied as `host:443`.
 * Without this, a bug could turn a dynamic `import()` into an outbound
 * request although the server has no net grant.
 */
export const DEFAULT_IMPORT_HOSTS: readonly string[] = Object.freeze([
  "deno.land:443",
  "jsr.io:443",
  "esm.sh:443",
  "raw.esm.sh:443",
  "cdn.jsdelivr.net:443",
  "raw.githubusercontent.com:443",
  "gist.githubusercontent.com:443",
]);

/**
 * The collector settings the server runs with: not a permission, but part of
 * every command line that starts it (launcher, self-confinement, systemd
 * unit, compiled binary), so they are rendered here, once.
 *
 * The server's live heap is about 23 MiB and stays there however many calls
 * it answers (`bench/heap_growth.ts`: flat after a full collection from 1,000
 * to 10,000 calls). With V8's defaults its RSS still grew 30 to 45 % over
 * those calls: the young generation may grow to 16 MiB semi-spaces and the
 * old generation far past the live heap before a collection, and glibc's
 * main arena (memory outside the JS heap) grew along with them. A small
 * semi-space cap and a fixed 1.3 old-generation growing factor keep RSS
 * within 4 % over the same calls (about 114 MiB at 10,000 instead of 185)
 * at no CPU cost per call beyond the run-to-run spread. 1 MiB, not the 4
 * first chosen: an idle server 5 MiB smaller (60 against 65 MiB), its start
 * x0.98 and its calls x1.00 paired, 2.0 % RSS growth over 10,000 calls and
 * under 8.2 MiB more at peak for a 50 MB output. Neither caps the heap, so
 * no workload that needs more memory is refused it.
 */
export const SERVER_V8_FLAGS = "--v8-flags=--max-semi-space-size=1,--heap-growing-percent=30";

/**
 * Deno reads and analyses every module a literal `import()` names, and
 * theirs, before the program's first line; a server start uses a fraction of
 * them (a stdio start never loads the HTTP transport, OAuth, PostgreSQL,
 * OpenTelemetry or the other verbs). With this flag (Deno 2.9.6, which this
 * repository pins) a dynamic import is loaded when it runs: the installed
 * server's start x0.96 paired, `htmcp version` 65 instead of 81 ms. A module
 * loaded that late needs read permission on its file, so only the bundled
 * program starts with it (`scripts/launch.ts`), its own folder in its read
 * set (`launcherReadPaths`); the source keeps Deno's default.
 */
export const LAZY_DYNAMIC_IMPORTS = "--unstable-lazy-dynamic-imports";

const join = (grants: readonly Grant[]) => grants.map((grant) => grant.value).join(",");

/**
 * The permission flags for `set`, in a stable order, then the server's
 * collector settings (`SERVER_V8_FLAGS`).
 *
 * @param set The permission set.
 * @returns Flags for `deno run` or `deno compile`, one argv element each.
 * @example
 * ```ts
 * import { type PermissionSet, renderDenoFlags } from "./mod.ts";
 * declare const set: PermissionSet;
 * const flags = renderDenoFlags(set);
 * new Deno.Command(Deno.execPath(), { args: ["run", ...flags, "src/main.ts"] });
 * ```
 */
export function renderDenoFlags(set: PermissionSet): readonly string[] {
  const flags = ["--no-prompt"];
  // An empty --allow-read= would mean "all" to some parsers; omit instead.
  if (set.read.length > 0) flags.push(`--allow-read=${join(set.read)}`);
  if (set.write.length > 0) flags.push(`--allow-write=${join(set.write)}`);
  if (set.run.length > 0) flags.push(`--allow-run=${join(set.run)}`);
  if (set.net.length > 0) flags.push(`--allow-net=${join(set.net)}`);
  else flags.push("--deny-net");
  if (set.env.length > 0) flags.push(`--allow-env=${join(set.env)}`);
  if (set.denyWrite.length > 0) flags.push(`--deny-write=${join(set.denyWrite)}`);
  flags.push("--deny-sys", "--deny-ffi", `--deny-import=${DEFAULT_IMPORT_HOSTS.join(",")}`);
  flags.push(SERVER_V8_FLAGS);
  return Object.freeze(flags);
}

/**
 * Joins argv into one POSIX shell line, single-quoting what needs it, so an
 * operator can paste `htmcp permissions` output after `deno run`.
 */
export function shellLine(argv: readonly string[]): string {
  return argv.map((arg) =>
    /^[A-Za-z0-9_@%+=:,./-]+$/.test(arg) ? arg : `'${arg.replaceAll("'", `'\\''`)}'`
  )
    .join(" ");
}
