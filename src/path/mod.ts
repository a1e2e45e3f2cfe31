/**
 * Path text for every layer: POSIX path arithmetic (`join`, `resolve`,
 * `dirname`, `basename`, `relative`, `normalize`, `isAbsolute`) and
 * `fromFileUrl`, with `node:path`'s and `node:url`'s results, but without
 * loading Deno's Node compatibility layer at startup. Lexical only: nothing
 * here reads the filesystem.
 *
 * @example
 * ```ts
 * import { join, relative, resolve } from "./mod.ts";
 * join("/jail", "a/../b"); // "/jail/b"
 * resolve("/jail", "/etc"); // "/etc"
 * relative("/jail/a", "/jail/b/c"); // "../b/c"
 * ```
 *
 * @module
 */
export { basename, dirname, isAbsolute, join, normalize, relative, resolve } from "./posix.ts";
export { fromFileUrl } from "./file_url.ts";
