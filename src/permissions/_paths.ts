/**
 * Lexical path relations for grant checks. Deno compares permission paths as
 * text after normalising them, so these compare text too; the real-path
 * counterpart lives in `verify_writes.ts`.
 *
 * @module
 */
import { isAbsolute, normalize } from "node:path";

/** `path` normalised, without a trailing slash (except for `/`). */
export function cleanPath(path: string): string {
  const normal = normalize(path);
  return normal.length > 1 && normal.endsWith("/") ? normal.slice(0, -1) : normal;
}

/** True when `path` is `root` or below it, segment by segment (`/jail-evil` is not in `/jail`). */
export function isInside(root: string, path: string): boolean {
  const r = cleanPath(root);
  const p = cleanPath(path);
  if (p === r) return true;
  return p.startsWith(r === "/" ? "/" : `${r}/`);
}

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
