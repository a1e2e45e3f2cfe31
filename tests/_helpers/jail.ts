/**
 * Jails that work under the kernel sandbox, and the assertion that a test
 * ran in the sandbox mode it claims.
 *
 * Why: commands run as the jail's owner (or `[sandbox] user`), never root, so
 * a test running as root must hand its jail to an ordinary uid, and bwrap
 * (running as that uid) must be able to reach the jail through every folder
 * above it; a 0700 temp folder stops it. Without this, the server refuses to
 * start, which is the point: no test may pass because its temp folder
 * quietly switched the sandbox off.
 */
import assert from "node:assert/strict";
import { dirname } from "node:path";

/** The uid (and gid) test jails are handed to when the tests run as root: nobody/nogroup. */
export const TEST_JAIL_UID = 65534;

/** The `[sandbox]` table of a test that exercises layer 1 alone (no kernel sandbox). */
export const PATH_CHECK_ONLY_TOML = '[sandbox]\nmode = "none"\naccept_path_check_only = true\n';

/**
 * Makes `jail` usable as a jail: when the tests run as root, everything in it
 * is chowned to `TEST_JAIL_UID` (so commands run as that uid and may write
 * it); the folders above it up to `/` get search permission for others
 * (`o+x`, not read), so bwrap can bind it. As a non-root user the jail is the
 * user's own already and commands run as that user, so only the search bits
 * are added.
 *
 * @param jail An existing folder.
 * @param searchableFrom The topmost folder whose mode may change (default:
 *   the jail's parent only; `/tmp` and above are searchable already).
 */
export async function prepareJail(jail: string, searchableFrom = dirname(jail)): Promise<void> {
  await chownTree(jail);
  let dir = dirname(jail);
  for (;;) {
    const info = await Deno.stat(dir);
    if (((info.mode ?? 0) & 0o001) === 0) await Deno.chmod(dir, (info.mode ?? 0) & 0o7777 | 0o711);
    if (dir === searchableFrom || dir === "/" || !dir.startsWith(searchableFrom)) break;
    dir = dirname(dir);
  }
}

/** Hands `path` (and, for a folder, all it holds) to `TEST_JAIL_UID`; a no-op when not root. */
export async function chownTree(path: string): Promise<void> {
  try {
    await Deno.chown(path, TEST_JAIL_UID, TEST_JAIL_UID);
  } catch (error) {
    // Only root may give a file away: as anyone else the tests' own files
    // are already the run-as uid's (the server's own).
    if (error instanceof Deno.errors.PermissionDenied) return;
    throw error;
  }
  const info = await Deno.lstat(path);
  if (!info.isDirectory) return;
  for await (const entry of Deno.readDir(path)) await chownTree(`${path}/${entry.name}`);
}

/** A fresh temp jail (a folder `jail` in a new temp folder), prepared for the sandbox. */
export async function makeSandboxJail(prefix = "htmcp-jail-"): Promise<string> {
  const dir = await Deno.realPath(await Deno.makeTempDir({ prefix }));
  const jail = `${dir}/jail`;
  await Deno.mkdir(jail);
  await prepareJail(jail);
  return jail;
}

/** Anything that can say which sandbox mode is in force. */
export type ModeSource =
  | { describe(): { readonly mode: string } }
  | { readonly executor: { describe(): { readonly mode: string } } }
  | { describePolicy(): Promise<{ readonly sandbox: string }> };

/**
 * Asserts the sandbox mode actually in force: from an executor, a server
 * context, or (through the real MCP client) a harness's `describe_policy`.
 * Security tests call it so none can pass because the sandbox was off.
 *
 * @param source An executor, a `ServerContext`, or a stdio/HTTP harness.
 * @param mode The mode the test is about.
 */
export async function assertSandboxMode(source: ModeSource, mode: "bwrap" | "none"): Promise<void> {
  if ("describePolicy" in source) {
    const { sandbox } = await source.describePolicy();
    if (mode === "bwrap") {
      assert.match(sandbox, /^Commands run in a kernel sandbox \(bubblewrap\)/, sandbox);
    } else assert.match(sandbox, /^The kernel sandbox is OFF/, sandbox);
    return;
  }
  const described = "executor" in source ? source.executor.describe() : source.describe();
  assert.equal(described.mode, mode, `the sandbox mode in force is ${described.mode}, not ${mode}`);
}
