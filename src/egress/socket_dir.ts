/**
 * Where the egress proxy's socket lives: a folder fixed by the policy (so
 * the generated Deno permission set can name it before the server starts),
 * in the system's shared `/tmp`, searchable but not listable by others.
 *
 * Why not the state dir: it is 0700, and bubblewrap binds the socket into
 * each sandbox as the uid commands run as, which must be able to reach it.
 * The folder is 0711, so that uid can pass through it to the socket, whose
 * mode is 0600 for that uid alone.
 *
 * `/tmp` is shared, so the folder may have been planted: one that is a
 * symlink, not a folder, not the server's own, or writable by others is
 * refused (someone who could rename our socket could put a proxy of their
 * own in its place).
 *
 * @module
 */
/**
 * The folder for `policy`'s socket: `/tmp/htmcp-egress-` and a 64-bit FNV-1a
 * of the jail root and audit log, so servers of different policies do not
 * share one. Pure.
 *
 * @param policy The jail root and audit log path of the policy (a `Policy` is one).
 * @returns The folder's absolute path.
 */
export function egressSocketDir(
  policy: { readonly jailRoot: string; readonly auditLog: string },
): string {
  let hash = 0xcbf29ce484222325n;
  for (const byte of new TextEncoder().encode(`${policy.jailRoot}\0${policy.auditLog}`)) {
    hash = ((hash ^ BigInt(byte)) * 0x100000001b3n) & 0xffffffffffffffffn;
  }
  return `/tmp/htmcp-egress-${hash.toString(16).padStart(16, "0")}`;
}

/**
 * How many servers of one policy may run their egress proxy at once: each
 * takes a numbered socket. Deno grants Unix sockets by exact path, so the
 * permission set lists every slot's path.
 */
export const EGRESS_SLOTS = 8;

/** Every slot's socket path in `dir`. Pure. */
export function egressSocketPaths(dir: string): string[] {
  return Array.from({ length: EGRESS_SLOTS }, (_, slot) => `${dir}/proxy-${slot}.sock`);
}

/**
 * Creates the folder (0711) or checks the one that is there, then listens
 * on the first free slot. A slot whose socket no server answers any more
 * (a server that was killed) is taken over; that check and the removal run
 * under a lock on the folder, so two starting servers never remove each
 * other's live socket.
 *
 * @returns The listener and its path, or one sentence saying why not.
 */
export async function listenOnFreeSlot(
  dir: string,
): Promise<{ ok: true; listener: Deno.Listener; path: string } | { ok: false; message: string }> {
  const trusted = await prepareFolder(dir);
  if (trusted !== null) return { ok: false, message: trusted };
  let lock: Deno.FsFile;
  try {
    lock = await Deno.open(`${dir}/.lock`, { create: true, write: true, mode: 0o600 });
    await lock.lock(true);
  } catch (error) {
    return { ok: false, message: `Cannot lock the egress socket folder "${dir}": ${why(error)}.` };
  }
  try {
    for (const path of egressSocketPaths(dir)) {
      if (await answered(path)) continue;
      await Deno.remove(path).catch(() => {});
      try {
        return { ok: true, listener: Deno.listen({ transport: "unix", path }), path };
      } catch (error) {
        if (error instanceof Deno.errors.AddrInUse) continue;
        return { ok: false, message: `Cannot listen on "${path}": ${why(error)}.` };
      }
    }
    return {
      ok: false,
      message:
        `Cannot start the egress proxy: ${EGRESS_SLOTS} servers of this policy already run one (every socket in "${dir}" is in use).`,
    };
  } finally {
    lock.close();
  }
}

/** True when a live server listens on `path`. */
async function answered(path: string): Promise<boolean> {
  try {
    const conn = await Deno.connect({ transport: "unix", path });
    conn.close();
    return true;
  } catch {
    return false;
  }
}

/** Creates the folder, or refuses one that is not ours; null when it can be trusted. */
async function prepareFolder(dir: string): Promise<string | null> {
  try {
    await Deno.mkdir(dir, { mode: 0o711 });
    await Deno.chmod(dir, 0o711);
  } catch (error) {
    if (!(error instanceof Deno.errors.AlreadyExists)) {
      return `Cannot create the egress socket folder "${dir}": ${why(error)}.`;
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
      return `Cannot start the egress proxy: "${dir}" is not a folder owned by the server and writable only by it; remove it and start again.`;
    }
  } catch (error) {
    await Deno.remove(probe).catch(() => {});
    return `Cannot check the egress socket folder "${dir}": ${why(error)}.`;
  }
  return null;
}

function why(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
