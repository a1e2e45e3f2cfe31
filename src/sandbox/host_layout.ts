/**
 * Reads, once at startup, which system folders are symlinks into `/usr`
 * (merged-/usr hosts such as Debian 12). The only I/O in `src/sandbox/`.
 *
 * @module
 */
import { type HostLayout, isUsrTarget, SYSTEM_DIRS } from "./bwrap_args.ts";

/**
 * Looks at each of `SYSTEM_DIRS` with `readLink`. Anything unreadable (no
 * such folder, not a symlink, or Deno refusing the read) is left out, so the
 * sandbox falls back to a read-only bind of that folder if it exists.
 *
 * @returns The layout to pass to `buildBwrapArgs`.
 */
export function detectHostLayout(): HostLayout {
  const usrSymlinks = new Map<string, string>();
  for (const dir of SYSTEM_DIRS) {
    try {
      const target = Deno.readLinkSync(dir);
      if (isUsrTarget(target)) usrSymlinks.set(dir, target);
    } catch {
      // Not a symlink, missing, or not readable under our permissions.
    }
  }
  return Object.freeze({ usrSymlinks });
}
