/**
 * The red team's race as a test fixture: a process that swaps a folder of
 * the jail for a symlink to another folder and back, as fast as it can,
 * while a test runs the check under attack. It stops itself: at a stop file
 * the test writes, or after `seconds`; nothing is ever signalled.
 */
import { ok } from "node:assert/strict";

/** A running loop: `stop()` writes the stop file and waits for its end. */
export interface RenameLoop {
  stop(): Promise<void>;
}

/**
 * Starts the loop in `folder`: `name` (a real folder) and `link` (a new
 * symlink to `target`) trade places over and over; resolves once the link
 * exists.
 */
export async function startRenameLoop(
  folder: string,
  name: string,
  link: string,
  target: string,
  seconds = 20,
): Promise<RenameLoop> {
  const stopFile = `${folder}/stop`;
  const child = new Deno.Command("python3", {
    args: [
      "-c",
      `import os, sys, time
folder, name, link, target, seconds = sys.argv[1:6]
os.chdir(folder)
os.symlink(target, link)
end = time.time() + float(seconds)
for _ in range(5_000_000):
    if time.time() > end or os.path.exists("stop"): break
    os.rename(name, "tmp-" + name); os.rename(link, name)
    os.rename(name, link); os.rename("tmp-" + name, name)`,
      folder,
      name,
      link,
      target,
      String(seconds),
    ],
    stdout: "null",
    stderr: "piped",
  }).spawn();
  const waitUntil = Date.now() + 10_000;
  while (Date.now() < waitUntil) {
    if (await Deno.lstat(`${folder}/${link}`).then(() => true, () => false)) break;
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  return {
    async stop() {
      await Deno.writeTextFile(stopFile, "");
      const { success, stderr } = await child.output();
      ok(success, new TextDecoder().decode(stderr));
    },
  };
}
