/**
 * The raw tool as the commands' uid: the proof, in a security test, that an
 * attack works without htmcp for the user commands run as (a proof run as
 * root would show what root can reach, not what a command can).
 */
import { TEST_JAIL_UID } from "./jail.ts";

/**
 * Runs `args` in `cwd` as the jail's uid (`setpriv`, no groups, a bare
 * PATH), `stdin` written to it, and waits for it.
 *
 * @returns Its exit code and stdout.
 */
export async function asCommandUid(
  args: readonly string[],
  cwd: string,
  stdin = "",
): Promise<{ code: number; out: string }> {
  const child = new Deno.Command("setpriv", {
    args: [`--reuid=${TEST_JAIL_UID}`, `--regid=${TEST_JAIL_UID}`, "--clear-groups", ...args],
    cwd,
    clearEnv: true,
    env: { PATH: "/usr/bin:/bin" },
    stdin: "piped",
    stdout: "piped",
    stderr: "null",
  }).spawn();
  const writer = child.stdin.getWriter();
  // A tool that never reads its stdin may have ended before this write.
  await writer.write(new TextEncoder().encode(stdin)).catch(() => {});
  await writer.close().catch(() => {});
  const out = await child.output();
  return { code: out.code, out: new TextDecoder().decode(out.stdout) };
}
