/**
 * POSIX path arithmetic on strings, the subset of `node:path`'s `posix` the
 * server uses, with the same results (`tests/path/posix_test.ts` compares
 * them case by case against `node:path` as the reference).
 *
 * Why not `node:path`: importing any `node:` module makes Deno load and run
 * its Node compatibility layer (errors, validators, `util.inspect`, ...)
 * before the importer's first line: for `node:path` alone that was most of a
 * Deno start again on the 2-core VM, paid by every server start, though the
 * server needs a hundred lines of string work.
 *
 * Lexical only: nothing here touches the filesystem, so `..` is resolved
 * against the text, never against a symlink's target. Callers that confine a
 * path resolve symlinks first (`jail/resolve.ts`).
 *
 * @module
 */

/**
 * `path` with `.` segments, empty segments and `..` segments that follow a
 * name removed; a `..` that would rise above the start is kept when
 * `allowAboveRoot` (a relative path), dropped otherwise (an absolute one).
 */
function normalizeSegments(path: string, allowAboveRoot: boolean): string {
  const kept: string[] = [];
  let above = 0;
  for (const segment of path.split("/")) {
    if (segment === "" || segment === ".") continue;
    if (segment !== "..") kept.push(segment);
    else if (kept.length > 0) kept.pop();
    else if (allowAboveRoot) above++;
  }
  return [...Array<string>(above).fill(".."), ...kept].join("/");
}

/**
 * Whether `path` is absolute (starts with `/`).
 *
 * @param path Any path text.
 * @returns True for an absolute path.
 */
export function isAbsolute(path: string): boolean {
  return path.startsWith("/");
}

/**
 * `path` normalised: `.` and empty segments dropped, `..` applied to the
 * segment before it; a trailing slash is kept, and "" becomes ".".
 *
 * @param path Any path text.
 * @returns The normalised path.
 */
export function normalize(path: string): string {
  if (path === "") return ".";
  const absolute = isAbsolute(path);
  const trailing = path.endsWith("/");
  const body = normalizeSegments(path, !absolute);
  if (body === "") return absolute ? "/" : trailing ? "./" : ".";
  return `${absolute ? "/" : ""}${body}${trailing ? "/" : ""}`;
}

/**
 * The non-empty `parts` joined with `/` and normalised ("." when none).
 *
 * @param parts Path parts; an absolute part does not restart the path (unlike `resolve`).
 * @returns The joined path.
 */
export function join(...parts: readonly string[]): string {
  const given = parts.filter((part) => part !== "");
  return given.length === 0 ? "." : normalize(given.join("/"));
}

/**
 * The absolute path `parts` name, read right to left until one is absolute;
 * the process's working folder is the start when none is. No trailing slash.
 *
 * @param parts Path parts.
 * @returns An absolute, normalised path.
 */
export function resolve(...parts: readonly string[]): string {
  let resolved = "";
  for (let i = parts.length - 1; i >= 0 && !isAbsolute(resolved); i--) {
    const part = parts[i]!;
    if (part === "") continue;
    resolved = resolved === "" ? part : `${part}/${resolved}`;
  }
  // Only a relative result needs the working folder (and read permission on it).
  if (!isAbsolute(resolved)) resolved = `${Deno.cwd()}/${resolved}`;
  return `/${normalizeSegments(resolved, false)}`;
}

/**
 * The folder part of `path`, as `node:path` gives it: trailing slashes are
 * ignored, only the one slash before the last segment is cut (`/a//b` gives
 * `/a/`), a bare name gives "." and a root entry "/" (`//a` gives `//`).
 *
 * @param path Any path text.
 * @returns The folder part.
 */
export function dirname(path: string): string {
  if (path === "") return ".";
  const rooted = isAbsolute(path);
  let end = -1;
  let inTrailingSlashes = true;
  for (let i = path.length - 1; i >= 1; i--) {
    if (path[i] !== "/") inTrailingSlashes = false;
    else if (!inTrailingSlashes) {
      end = i;
      break;
    }
  }
  if (end === -1) return rooted ? "/" : ".";
  if (rooted && end === 1) return "//";
  return path.slice(0, end);
}

/**
 * The last segment of `path`, trailing slashes ignored.
 *
 * @param path Any path text.
 * @returns The last segment ("" for "/" or "").
 */
export function basename(path: string): string {
  let end = path.length;
  while (end > 0 && path[end - 1] === "/") end--;
  return path.slice(path.lastIndexOf("/", end - 1) + 1, end);
}

/**
 * The relative path from `from` to `to`, both resolved first ("" when they
 * name the same place).
 *
 * @param from Where the result starts.
 * @param to Where it leads.
 * @returns Segments such that `resolve(from, result) === resolve(to)`.
 */
export function relative(from: string, to: string): string {
  const fromParts = resolve(from).split("/").filter((part) => part !== "");
  const toParts = resolve(to).split("/").filter((part) => part !== "");
  let common = 0;
  while (
    common < fromParts.length && common < toParts.length &&
    fromParts[common] === toParts[common]
  ) common++;
  return [...Array<string>(fromParts.length - common).fill(".."), ...toParts.slice(common)]
    .join("/");
}
