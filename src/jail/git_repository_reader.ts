/**
 * The file access the policy's repository check (`inspectGitRepository`)
 * needs, built on the jail's own symlink-following resolver so that both
 * checks read paths the same way. Only `lstat`, `readlink` and reads of
 * small regular files inside the jail happen here; the policy decides.
 *
 * @module
 */
import { isInside } from "./is_inside.ts";
import { resolveFollowingSymlinks } from "./resolve.ts";
import type { GitRepositoryReader } from "../policy/mod.ts";

function errorName(error: unknown): string {
  return error instanceof Error ? error.name : "unknown error";
}

/**
 * A reader for the jail at `jailRoot`.
 *
 * @param jailRoot The jail's real path.
 */
export function gitRepositoryReader(jailRoot: string): GitRepositoryReader {
  return {
    isInsideJail: (path) => isInside(jailRoot, path),
    resolve: (base, path) => resolveFollowingSymlinks(jailRoot, base, path),
    async kind(path) {
      try {
        const info = await Deno.lstat(path);
        if (info.isSymlink) return "symlink";
        if (info.isDirectory) return "directory";
        return info.isFile ? "file" : "other";
      } catch (error) {
        if (error instanceof Deno.errors.NotFound || error instanceof Deno.errors.NotADirectory) {
          return "missing";
        }
        return "other";
      }
    },
    async list(path) {
      try {
        const names: string[] = [];
        for await (const entry of Deno.readDir(path)) names.push(entry.name);
        return names.sort();
      } catch (error) {
        return { error: errorName(error) };
      }
    },
    async entries(path) {
      try {
        const found: { name: string; kind: "file" | "directory" | "symlink" | "other" }[] = [];
        for await (const entry of Deno.readDir(path)) {
          const kind = entry.isSymlink
            ? "symlink"
            : entry.isDirectory
            ? "directory"
            : entry.isFile
            ? "file"
            : "other";
          found.push({ name: entry.name, kind });
        }
        return found.sort((a, b) => a.name < b.name ? -1 : a.name > b.name ? 1 : 0);
      } catch (error) {
        return { error: errorName(error) };
      }
    },
    async readText(path, limitBytes) {
      try {
        const info = await Deno.lstat(path);
        if (!info.isFile) return { error: "not a regular file" };
        if (info.size > limitBytes) return { error: `larger than ${limitBytes} bytes` };
        const bytes = await Deno.readFile(path);
        if (bytes.length > limitBytes) return { error: `larger than ${limitBytes} bytes` };
        return new TextDecoder("utf-8", { fatal: true }).decode(bytes);
      } catch (error) {
        if (error instanceof Deno.errors.NotFound) return null;
        if (error instanceof TypeError) return { error: "not UTF-8" };
        return { error: errorName(error) };
      }
    },
  };
}
