/**
 * Reads, once at startup, which system folders are symlinks into `/usr`
 * (merged-/usr hosts such as Debian 12). The only I/O in `src/sandbox/`.
 *
 * @module
 */
import { type HostLayout, isUsrTarget, SYSTEM_DIRS } from "./bwrap_args.ts";

/**
 * The layout from what each of `SYSTEM_DIRS` links to (absent: not a
 * symlink, missing, or unreadable). Only links into `/usr` count. Pure.
 *
 * @param links Folder to symlink target, as read from the host.
 * @returns The layout to pass to `buildBwrapArgs`.
 */
export function layoutFromLinks(links: ReadonlyMap<string, string>): HostLayout {
  const usrSymlinks = new Map<string, string>();
  for (const dir of SYSTEM_DIRS) {
    const target = links.get(dir);
    if (target !== undefined && isUsrTarget(target)) usrSymlinks.set(dir, target);
  }
  return Object.freeze({ usrSymlinks });
}

/**
 * Looks at each of `SYSTEM_DIRS` with `readLink`. Anything unreadable (no
 * such folder, not a symlink, or Deno refusing the read) is left out, so the
 * sandbox falls back to a read-only bind of that folder if it exists. The
 * server itself may not read these: its executor asks the launcher helper
 * (`probeServerUid`), and builds the same layout with `layoutFromLinks`.
 *
 * @returns The layout to pass to `buildBwrapArgs`.
 */
export function detectHostLayout(): HostLayout {
  const links = new Map<string, string>();
  for (const dir of SYSTEM_DIRS) {
    try {
      links.set(dir, Deno.readLinkSync(dir));
    } catch {
      // Not a symlink, missing, or not readable under our permissions.
    }
  }
  return layoutFromLinks(links);
}
