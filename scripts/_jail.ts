/**
 * Prepares a folder to be a jail under the kernel sandbox, for the demo, the
 * conformance run and the tests: commands run as the jail's owner (never
 * root), so a root caller hands the jail to nobody (65534); and bwrap,
 * running as that uid, must reach the jail through every folder above it,
 * so those get search permission (`o+x`, never read).
 *
 * @module
 */
import { dirname } from "node:path";

/** The uid (and gid) jails are handed to when the caller is root: nobody/nogroup. */
export const JAIL_SERVICE_UID = 65534;

/**
 * Makes `jail` usable as a jail: when running as root, everything in it is
 * chowned to `JAIL_SERVICE_UID`; the folders above it, up to and including
 * `searchableFrom`, get `o+x`. As a non-root user the jail is the user's own
 * already and commands run as that user, so only the search bits are added.
 *
 * @param jail An existing folder.
 * @param searchableFrom The topmost folder whose mode may change (default:
 *   the jail's parent only; `/tmp` and above are searchable already).
 */
export async function prepareJail(jail: string, searchableFrom = dirname(jail)): Promise<void> {
  await chownTree(jail);
  for (let dir = dirname(jail);; dir = dirname(dir)) {
    const mode = (await Deno.stat(dir)).mode ?? 0;
    if ((mode & 0o001) === 0) await Deno.chmod(dir, (mode & 0o7777) | 0o711);
    if (dir === searchableFrom || dir === "/" || !dir.startsWith(searchableFrom)) break;
  }
}

/** Hands `path` (and, for a folder, all it holds) to `JAIL_SERVICE_UID`; a no-op when not root. */
export async function chownTree(path: string): Promise<void> {
  try {
    await Deno.chown(path, JAIL_SERVICE_UID, JAIL_SERVICE_UID);
  } catch (error) {
    // Only root may give a file away: anyone else's files are already the
    // run-as uid's (the server's own).
    if (error instanceof Deno.errors.PermissionDenied) return;
    throw error;
  }
  const info = await Deno.lstat(path);
  if (!info.isDirectory) return;
  for await (const entry of Deno.readDir(path)) await chownTree(`${path}/${entry.name}`);
}

/** A fake AWS key pair from AWS's own documentation: never a real secret. */
export const FAKE_AWS = "aws_access_key_id = AKIAIOSFODNN7EXAMPLE\n" +
  "aws_secret_access_key = wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY\n";

/**
 * The quick start's jail (`deno task demo`): a temp folder with a few files,
 * prepared (`prepareJail`) so that under the shipped policy's kernel
 * sandbox commands run as its owner and may write it.
 *
 * @returns The jail's real path.
 */
export async function makeDemoJail(): Promise<string> {
  const jail = await Deno.realPath(await Deno.makeTempDir({ prefix: "htmcp-demo-jail-" }));
  await Deno.chmod(jail, 0o755);
  await Deno.writeTextFile(`${jail}/notes.txt`, "Remember: the jail is the whole world.\n");
  await Deno.writeTextFile(`${jail}/credentials`, FAKE_AWS);
  await Deno.mkdir(`${jail}/src`);
  await Deno.writeTextFile(`${jail}/src/hello.txt`, "hello from inside the jail\n");
  await prepareJail(jail);
  return jail;
}
