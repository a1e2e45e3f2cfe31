/**
 * bwrap's own floor: bwrap with the sandbox's flags running a command,
 * started bare from Deno, no launcher around it. bwrap reads the sandbox's
 * `/etc` copies from descriptors (`--file FD`, from `FIRST_COPY_FD` on),
 * which `Deno.Command` cannot pass, so `/bin/sh` opens them and execs bwrap;
 * the same shell opening the same files and exec'ing the command bare is
 * timed beside it, and its extra over a bare spawn of the command is taken
 * off: the sample is bwrap's own time plus one bare spawn.
 *
 * @module
 */
import { ETC_COPIES, FIRST_COPY_FD } from "../src/sandbox/mod.ts";

/** `exec "$0" "$@"` with each copy open at its descriptor (dash: one digit each). */
const EXEC_WITH_COPIES = `exec "$0" "$@" ${
  ETC_COPIES.map((file, i) => `${FIRST_COPY_FD + i}<${file}`).join(" ")
}`;

async function timed(path: string, args: readonly string[], options: Deno.CommandOptions) {
  const t0 = performance.now();
  const out = await new Deno.Command(path, {
    ...options,
    args: [...args],
    stdin: "null",
    stdout: "piped",
    stderr: "piped",
  }).output();
  if (!out.success) {
    throw new Error(`${path} ${args.join(" ")}: ${new TextDecoder().decode(out.stderr)}`);
  }
  return performance.now() - t0;
}

/**
 * One sample of the floor, in ms.
 *
 * @param bwrapArgs `buildBwrapArgs()`'s options.
 * @param command The command bwrap runs (an absolute path), with its arguments.
 * @param options The spawn's cwd and environment.
 */
export async function bwrapFloorSample(
  bwrapArgs: readonly string[],
  command: readonly string[],
  options: Deno.CommandOptions = {},
): Promise<number> {
  const sandboxed = await timed(
    "/bin/sh",
    ["-c", EXEC_WITH_COPIES, "/usr/bin/bwrap", ...bwrapArgs, "--", ...command],
    options,
  );
  const shell = await timed("/bin/sh", ["-c", EXEC_WITH_COPIES, ...command], options);
  const bare = await timed(command[0]!, command.slice(1), options);
  return sandboxed - (shell - bare);
}
