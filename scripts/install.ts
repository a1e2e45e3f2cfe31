/**
 * `deno task install [--prefix DIR]`: puts an `htmcp` command on PATH that
 * works offline from then on.
 *
 * It copies this checkout's program (`src/`, `scripts/`, `deno.json`,
 * `deno.lock`) to `PREFIX/lib/htmcp/<version>/`, fetches every dependency
 * once into the Deno cache (the lock is frozen: exactly the pinned versions),
 * bundles the copy (`bundleProgram`: server and launcher, code-split, into
 * `dist/`), and writes `PREFIX/bin/htmcp`, a small shell script that runs the
 * bundled launcher with `--cached-only` (never the network) and the same
 * `deno` that installed it. The launcher generates the Deno permission flags from the
 * policy at every start, exactly as `deno task htmcp` does, so a changed
 * policy can never run under stale flags, and prints the server's start
 * (`HTMCP_LAUNCH_EXEC=1`); the script then `exec`s the server, so the
 * launcher does not stay resident and the client's signals reach the server
 * itself. The script checks that the launcher is the one it installed (its
 * hash; the server's chunks are not hashed at each start) and fails loudly
 * otherwise.
 *
 * The default prefix is `~/.local` (`~/.local/bin` is on PATH on most
 * distributions).
 *
 * @module
 */
import { join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { createHash } from "node:crypto";
import { parseArgs } from "../src/cli/args.ts";
import { VERSION } from "../src/version.ts";
import { shQuote } from "./_sh_quote.ts";
import { compileProgram } from "./build_launcher.ts";
import { LAZY_DYNAMIC_IMPORTS, SERVER_V8_FLAGS } from "../src/permissions/mod.ts";

const ROOT = fileURLToPath(new URL("..", import.meta.url));
const COPIED = ["src", "scripts", "deno.json", "deno.lock"] as const;

export interface InstallResult {
  readonly command: string;
  readonly libDir: string;
}

async function copyTree(from: string, to: string): Promise<void> {
  const info = await Deno.lstat(from);
  if (info.isDirectory) {
    await Deno.mkdir(to, { recursive: true });
    for await (const entry of Deno.readDir(from)) {
      await copyTree(join(from, entry.name), join(to, entry.name));
    }
  } else if (info.isFile) {
    await Deno.copyFile(from, to);
  }
  // Symlinks and other kinds are not part of the program: skipped.
}

async function sha256(path: string): Promise<string> {
  return createHash("sha256").update(await Deno.readFile(path)).digest("hex");
}

/** The Deno cache the installed command uses: this process's, made absolute. */
function denoDir(): string {
  const given = Deno.env.get("DENO_DIR");
  if (given !== undefined && given !== "") return resolve(given);
  return join(Deno.env.get("HOME") ?? "/root", ".cache", "deno");
}

/**
 * Installs into `prefix`.
 *
 * @throws {Error} With Deno's output when the dependencies cannot be fetched.
 */
export async function install(prefix: string): Promise<InstallResult> {
  const libDir = join(prefix, "lib", "htmcp", VERSION);
  const binDir = join(prefix, "bin");
  await Deno.remove(libDir, { recursive: true }).catch(() => {});
  await Deno.mkdir(libDir, { recursive: true });
  for (const name of COPIED) await copyTree(join(ROOT, name), join(libDir, name));
  const cacheDir = denoDir();
  const fetched = await new Deno.Command(Deno.execPath(), {
    args: [
      "cache",
      "--quiet",
      "--frozen",
      "--config",
      join(libDir, "deno.json"),
      join(libDir, "src", "main.ts"),
      join(libDir, "scripts", "launch.ts"),
    ],
    env: { DENO_DIR: cacheDir },
    stdout: "piped",
    stderr: "piped",
  }).output();
  if (!fetched.success) {
    throw new Error(
      `Could not fetch the dependencies: ${new TextDecoder().decode(fetched.stderr)}`,
    );
  }
  // The copy bundles itself (its helper folder is the copy's): the installed
  // command starts the bundle, which loads far less than the source does.
  const bundled = await new Deno.Command(Deno.execPath(), {
    args: [
      "run",
      "--quiet",
      "--allow-all",
      "--config",
      join(libDir, "deno.json"),
      join(libDir, "scripts", "bundle.ts"),
      "--program",
      join(libDir, "dist"),
    ],
    env: { DENO_DIR: cacheDir },
    stdout: "piped",
    stderr: "piped",
  }).output();
  if (!bundled.success) {
    throw new Error(`Could not bundle the program: ${new TextDecoder().decode(bundled.stderr)}`);
  }
  // The start cache's checker, built like the helper, beside it; without it
  // every start runs the launcher.
  await compileProgram(
    join(libDir, "scripts", "htmcp_start.c"),
    join(libDir, "build", "htmcp-start"),
  );
  const launcher = join(libDir, "dist", "scripts", "launch.js");
  const script = `#!/bin/sh
# htmcp ${VERSION}, installed by \`deno task install\` from ${ROOT}
# The launcher builds the Deno permission flags from the policy (never -A for
# the server) and prints that start; this script then execs it, so one Deno
# process, the server, remains (with its serving helper, which every command
# is a fork of). Offline: --cached-only.
set -e
lib=${shQuote(libDir)}
deno=${shQuote(Deno.execPath())}
launcher="$lib/dist/scripts/launch.js"
expected=${shQuote(await sha256(launcher))}
DENO_DIR=\${DENO_DIR:-${shQuote(cacheDir)}}
HTMCP_CACHED_ONLY=1
export DENO_DIR HTMCP_CACHED_ONLY
# The start cache (scripts/_start_cache.ts): the launcher's last start for
# these arguments in this folder, reused only while every fact it looked at
# (files, paths, variables, the folder) reads the same, which htmcp-start
# checks in one exec. It reads only an entry this user owns, in a folder this
# user owns and keeps closed; on a miss it names the entry the launcher writes.
unset HTMCP_START_CACHED HTMCP_START_FLAGS HTMCP_START_CACHE HTMCP_START_SALT HTMCP_START_TOOL
start=
entry=
tool="$lib/build/htmcp-start"
cache="$lib/start"
if [ -x "$tool" ]; then
  if found=$("$tool" check "$cache" "$expected" "$@"); then
    start=$found
    # The server refuses a cached start its own permission set disagrees with.
    HTMCP_START_CACHED=$cache
  else
    entry=$found
  fi
fi
if [ -z "$start" ]; then
  if [ ! -f "$launcher" ]; then
    echo "htmcp: the installation in $lib is missing; run \\\`deno task install\\\` again." >&2
    exit 1
  fi
  actual=$(sha256sum "$launcher")
  if [ "\${actual%% *}" != "$expected" ]; then
    echo "htmcp: $launcher changed since it was installed; run \\\`deno task install\\\` again." >&2
    exit 1
  fi
  # The launcher's own failure (a bad command line, a policy that does not
  # load) is its exit status, its sentence already on stderr. The server's V8
  # flags for the launcher too: both run the bundle's shared chunks, and V8
  # keeps one code cache per flag set, so with different flags each start
  # would throw away the other's cache (about 70 ms a start).
  start=$(HTMCP_LAUNCH_EXEC=1 HTMCP_START_CACHE="$entry" HTMCP_START_SALT="$expected" HTMCP_START_TOOL="$tool" "$deno" run --quiet --cached-only --allow-all --no-config ${
    shQuote(SERVER_V8_FLAGS)
  } ${LAZY_DYNAMIC_IMPORTS} "$launcher" "$@") || exit $?
fi
# The fragment sets the folder, HTMCP_FD_LIMIT and the argv, each value quoted.
# Fail closed: without a \`deno run\` argv from it, the user's own arguments
# must never reach deno.
set --
eval "$start"
if [ "\${1-}" != run ]; then
  echo "htmcp: the launcher in $lib printed no start; run \\\`deno task install\\\` again." >&2
  exit 1
fi
if [ -n "\${HTMCP_START_CACHED-}" ]; then
  # The permission flags this start really passes, one a line, which the
  # server compares with the set it computes from the policy now: deno's
  # own, before the script's path. What follows it is the server's (its
  # --allow-unconfined is not a permission flag).
  HTMCP_START_FLAGS=
  for arg do
    case $arg in
      run) ;;
      --allow-*|--deny-*) HTMCP_START_FLAGS="$HTMCP_START_FLAGS$arg
";;
      -*) ;;
      *) break ;;
    esac
  done
  export HTMCP_START_CACHED HTMCP_START_FLAGS
fi
exec "$deno" "$@"
`;
  await Deno.mkdir(binDir, { recursive: true });
  const command = join(binDir, "htmcp");
  const temp = `${command}.tmp-${Deno.pid}`;
  await Deno.writeTextFile(temp, script, { mode: 0o755 });
  await Deno.chmod(temp, 0o755);
  await Deno.rename(temp, command);
  return { command, libDir };
}

if (import.meta.main) {
  const parsed = parseArgs(Deno.args, { values: ["--prefix"] });
  if (!parsed.ok || parsed.args.positionals.length > 0 || parsed.args.rest !== null) {
    console.error(
      parsed.ok ? "Usage: deno task install [--prefix DIR]" : `install: ${parsed.message}`,
    );
    Deno.exit(2);
  }
  const home = Deno.env.get("HOME") ?? "/root";
  const prefix = resolve(parsed.args.values.get("--prefix") ?? join(home, ".local"));
  try {
    const { command, libDir } = await install(prefix);
    console.log(`install: wrote ${command} (program in ${libDir})`);
    const path = (Deno.env.get("PATH") ?? "").split(":");
    if (!path.includes(join(prefix, "bin"))) {
      console.log(`install: ${join(prefix, "bin")} is not on your PATH; add it to use "htmcp".`);
    }
  } catch (error) {
    console.error(`install: ${error instanceof Error ? error.message : String(error)}`);
    Deno.exit(1);
  }
}
