/**
 * Lexical path relations for grant checks. Deno compares permission paths as
 * text after normalising them, so these compare text too; the real-path
 * counterpart lives in `verify_writes.ts`.
 *
 * @module
 */
import { isAbsolute, normalize } from "../path/mod.ts";

/** `path` normalised, without a trailing slash (except for `/`). */
export function cleanPath(path: string): string {
  const normal = normalize(path);
  return normal.length > 1 && normal.endsWith("/") ? normal.slice(0, -1) : normal;
}

/** The one containment predicate of every layer (segment-wise, after normalising). */
export { isInside } from "../jail/is_inside.ts";
import { isInside } from "../jail/is_inside.ts";

/** True when either path contains the other. */
export function overlaps(a: string, b: string): boolean {
  return isInside(a, b) || isInside(b, a);
}

/** The folder holding `path`. */
export function parentOf(path: string): string {
  const clean = cleanPath(path);
  const cut = clean.lastIndexOf("/");
  return cut <= 0 ? "/" : clean.slice(0, cut);
}

/** True for an absolute path; relative PATH entries are never granted anything. */
export function isAbsolutePath(path: string): boolean {
  return path.length > 0 && isAbsolute(path);
}
