/**
 * Before `deno task test`: the kernel-layer tests need bubblewrap. On a fresh
 * Debian/Ubuntu machine where we are root, install it with apt-get; otherwise
 * say exactly what is missing and stop, rather than letting dozens of tests
 * fail with a less useful message.
 *
 * @module
 */
import { ensureLauncherBuilt } from "./build_launcher.ts";

async function has(binary: string): Promise<boolean> {
  try {
    const info = await Deno.stat(binary);
    return info.isFile;
  } catch {
    return false;
  }
}

async function run(command: string, args: string[]): Promise<boolean> {
  const status = await new Deno.Command(command, { args, stdout: "inherit", stderr: "inherit" })
    .output();
  return status.success;
}

if (!(await has("/usr/bin/bwrap"))) {
  const isRoot = Deno.uid() === 0;
  if (isRoot && (await has("/usr/bin/apt-get"))) {
    console.error("test prerequisites: installing bubblewrap with apt-get");
    const ok = (await run("/usr/bin/apt-get", ["update", "-qq"])) &&
      (await run("/usr/bin/apt-get", ["install", "-y", "-qq", "bubblewrap"]));
    if (!ok) {
      console.error("test prerequisites: apt-get could not install bubblewrap.");
      Deno.exit(1);
    }
  } else {
    console.error(
      "test prerequisites: /usr/bin/bwrap is missing; install bubblewrap (e.g. sudo apt-get install -y bubblewrap).",
    );
    Deno.exit(1);
  }
}

// Every command runs through the launcher helper, built from this checkout's
// source; (re)build it when it is missing or stale.
const launcher = await ensureLauncherBuilt();
if (launcher !== null) {
  console.error(`test prerequisites: ${launcher}`);
  Deno.exit(1);
}
