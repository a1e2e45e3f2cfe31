/**
 * Segment-wise containment. A string-prefix test would accept `/jail-evil`
 * as inside `/jail`; comparing whole segments cannot.
 *
 * @module
 */

import * as posix from "../path/mod.ts";

/**
 * Whether absolute `path` is `root` or below it, comparing whole segments
 * after lexical normalisation (no filesystem access: callers resolve
 * symlinks first).
 *
 * @param root An absolute folder, normally the jail's real path.
 * @param path An absolute path, normally already symlink-resolved.
 * @throws {TypeError} When either is not absolute (a caller bug).
 *
 * @example
 * ```ts
 * import { isInside } from "./is_inside.ts";
 * isInside("/jail", "/jail/a"); // true
 * isInside("/jail", "/jail-evil/a"); // false
 * ```
 */
export function isInside(root: string, path: string): boolean {
  if (!posix.isAbsolute(root) || !posix.isAbsolute(path)) {
    throw new TypeError(`isInside() needs absolute paths, got "${root}" and "${path}".`);
  }
  const normalRoot = posix.resolve(root);
  const normalPath = posix.resolve(path);
  if (normalRoot === "/") return true;
  return normalPath === normalRoot || normalPath.startsWith(`${normalRoot}/`);
}
