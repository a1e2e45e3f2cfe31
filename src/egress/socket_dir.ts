/**
 * Where the egress proxy's socket lives: a folder fixed by the policy (so
 * the generated Deno permission set can name it before the server starts),
 * in the system's shared `/tmp`, searchable but not listable by others.
 *
 * Why not the state dir: it is 0700, and bubblewrap binds the socket into
 * each sandbox as the uid commands run as, which must be able to reach it.
 * The folder is 0711, so that uid can pass through it to the socket, whose
 * name is random and whose mode is 0600 for that uid alone.
 *
 * `/tmp` is shared, so the folder may have been planted: one that is a
 * symlink, not a folder, not the server's own, or writable by others is
 * refused (someone who could rename our socket could put a proxy of their
 * own in its place).
 *
 * @module
 */
import type { Policy } from "../config/types.ts";

/**
 * The folder for `policy`'s socket: `/tmp/htmcp-egress-` and a 64-bit FNV-1a
 * of the jail root and audit log, so servers of different policies do not
 * share one. Pure.
 */
export function egressSocketDir(policy: Pick<Policy, "jailRoot" | "auditLog">): string {
  let hash = 0xcbf29ce484222325n;
  for (const byte of new TextEncoder().encode(`${policy.jailRoot}\0${policy.auditLog}`)) {
    hash = ((hash ^ BigInt(byte)) * 0x100000001b3n) & 0xffffffffffffffffn;
  }
  return `/tmp/htmcp-egress-${hash.toString(16).padStart(16, "0")}`;
}

/**
 * Creates the folder (0711) or checks the one that is there, and returns a
 * fresh socket path in it.
 *
 * @returns The socket path, or one sentence saying why the folder cannot be trusted.
 */
export async function prepareSocketPath(
  dir: string,
): Promise<{ ok: true; path: string } | { ok: false; message: string }> {
  try {
    await Deno.mkdir(dir, { mode: 0o711 });
    await Deno.chmod(dir, 0o711);
  } catch (error) {
    if (!(error instanceof Deno.errors.AlreadyExists)) {
      const why = error instanceof Error ? error.message : String(error);
      return { ok: false, message: `Cannot create the egress socket folder "${dir}": ${why}.` };
    }
  }
  // Who are we? The owner of a file we create ourselves (Deno.uid() needs --allow-sys).
  const probe = `${dir}/.owner-${crypto.randomUUID()}`;
  try {
    const info = await Deno.lstat(dir);
    await Deno.writeTextFile(probe, "", { createNew: true, mode: 0o600 });
    const mine = (await Deno.lstat(probe)).uid;
    await Deno.remove(probe);
    const mode = info.mode ?? 0o777;
    if (info.isSymlink || !info.isDirectory || info.uid !== mine || (mode & 0o022) !== 0) {
      return {
        ok: false,
        message:
          `Cannot start the egress proxy: "${dir}" is not a folder owned by the server and writable only by it; remove it and start again.`,
      };
    }
  } catch (error) {
    await Deno.remove(probe).catch(() => {});
    const why = error instanceof Error ? error.message : String(error);
    return { ok: false, message: `Cannot check the egress socket folder "${dir}": ${why}.` };
  }
  return { ok: true, path: `${dir}/egress-${crypto.randomUUID()}.sock` };
}
