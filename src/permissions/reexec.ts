/**
 * The `deno run -A` form of confinement: when a plain `deno run` (source or
 * the `dist/htmcp.js` bundle) starts with broader permissions than the
 * policy's set, the server is started again as a child, `deno run <flags>
 * MODULE ARGS`, under exactly the generated flags (the `flags` layer), with
 * stdio inherited and termination signals forwarded. This is what the task
 * launcher does, so `deno run -A dist/htmcp.js serve --policy FILE` works as
 * a user would try it first, where the Worker form needs
 * `--unstable-worker-options` and Deno would otherwise stop with "Unstable
 * API 'Worker.deno.permissions'".
 *
 * The parent keeps its broad grants but handles no input: it only waits for
 * the child and passes its exit status on. A compiled binary keeps the Worker
 * form (its flags are baked in, and it has no `deno` to re-run).
 *
 * @module
 */
import { dirname, fromFileUrl, join } from "../path/mod.ts";
import { renderDenoFlags } from "./render_flags.ts";
import type { PermissionSet } from "./types.ts";

const FORWARDED: readonly Deno.Signal[] = ["SIGTERM", "SIGINT", "SIGHUP"];
const SIGNAL_NUMBERS: ReadonlyMap<string, number> = new Map([
  ["SIGHUP", 1],
  ["SIGINT", 2],
  ["SIGKILL", 9],
  ["SIGTERM", 15],
]);

/**
 * The child's argv (after the deno executable), or null when this process
 * cannot start itself again (a compiled binary, a remote main module, or no
 * grant to run deno).
 */
export function reexecArgv(set: PermissionSet, args: readonly string[]): string[] | null {
  if (Deno.build.standalone) return null;
  if (!Deno.mainModule.startsWith("file:")) return null;
  const granted = Deno.permissions.querySync({ name: "run", command: Deno.execPath() });
  if (granted.state !== "granted") return null;
  // Started with the Worker option on purpose: keep the cheaper in-process form.
  if (startedWithWorkerOptions()) return null;
  const module = fromFileUrl(Deno.mainModule);
  // The source needs its import map (the nearest deno.json); a bundle with
  // none above it runs with no config, so no stray deno.json is picked up.
  const config = nearestConfig(dirname(module));
  return [
    "run",
    ...renderDenoFlags(set),
    ...(config === null ? ["--no-config"] : ["--config", config]),
    module,
    ...args,
  ];
}

/** Whether this process's own command line enabled the unstable Worker options. */
function startedWithWorkerOptions(): boolean {
  try {
    const argv = Deno.readTextFileSync("/proc/self/cmdline").split("\0");
    return argv.some((arg) => arg === "--unstable-worker-options" || arg === "--unstable");
  } catch {
    return false;
  }
}

/** The first `deno.json` in `dir` or a folder above it, or null. */
function nearestConfig(dir: string): string | null {
  for (let current = dir;; current = dirname(current)) {
    const candidate = join(current, "deno.json");
    try {
      if (Deno.statSync(candidate).isFile) return candidate;
    } catch {
      // not here
    }
    if (dirname(current) === current) return null;
  }
}

/**
 * Runs `argv` as the confined child and resolves with its exit code (128 +
 * signal number when a signal ended it).
 */
export async function runReexec(argv: readonly string[]): Promise<number> {
  const child = new Deno.Command(Deno.execPath(), {
    args: [...argv],
    stdin: "inherit",
    stdout: "inherit",
    stderr: "inherit",
  }).spawn();
  return await superviseChild(child);
}

/**
 * Waits for `child` while forwarding termination signals to it, and returns
 * its exit code (128 + signal number when a signal ended it). Shared by every
 * parent that starts the confined server and stays only to relay signals.
 *
 * @param child The spawned server process.
 */
export async function superviseChild(child: Deno.ChildProcess): Promise<number> {
  // A client that stops the server signals our pid, not the child's.
  const forwarders = FORWARDED.map((signal) => {
    const forward = () => {
      try {
        child.kill(signal);
      } catch {
        // already exited
      }
    };
    Deno.addSignalListener(signal, forward);
    return [signal, forward] as const;
  });
  const status = await child.status;
  for (const [signal, forward] of forwarders) Deno.removeSignalListener(signal, forward);
  return status.signal === null ? status.code : 128 + (SIGNAL_NUMBERS.get(status.signal) ?? 0);
}
