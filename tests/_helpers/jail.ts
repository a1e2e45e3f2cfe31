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
import { prepareJail } from "../../scripts/_jail.ts";

export { chownTree, JAIL_SERVICE_UID as TEST_JAIL_UID, prepareJail } from "../../scripts/_jail.ts";

/** The `[sandbox]` table of a test that exercises layer 1 alone (no kernel sandbox). */
export const PATH_CHECK_ONLY_TOML = '[sandbox]\nmode = "none"\naccept_path_check_only = true\n';

/**
 * A canary file outside the jail that the commands' uid could write, change
 * or remove (its folder `open-to-all` under `dir` is mode 0777), so that
 * only htmcp keeps it as it is. A canary in a folder closed to that uid
 * (a harness's own folder is) stays untouched whatever htmcp does.
 *
 * @returns The canary's path.
 */
export async function openCanary(dir: string, name: string, content: string): Promise<string> {
  const open = `${dir}/open-to-all`;
  await Deno.mkdir(open, { recursive: true });
  await Deno.chmod(open, 0o777);
  await Deno.writeTextFile(`${open}/${name}`, content);
  await Deno.chmod(`${open}/${name}`, 0o666);
  return `${open}/${name}`;
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
