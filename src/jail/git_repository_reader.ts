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
import { openRegularInJail, type OpenRegularRefusal } from "./open_regular.ts";
import type { GitRepositoryReader } from "../policy/mod.ts";

/** A refusal of the link-free open, as the repository check's sentences say it. */
function describe(refusal: OpenRegularRefusal): string {
  switch (refusal.kind) {
    case "folder":
    case "not-regular":
      return "not a regular file";
    case "escape":
    case "unreadable":
      return refusal.why;
    case "changed":
      return "it changed while it was read";
    default:
      return refusal.kind;
  }
}

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
      // The server reads with its own rights: never through a link, at any
      // component, even one swapped in while it reads (`open_regular.ts`).
      const opened = await openRegularInJail(jailRoot, path);
      if (!opened.ok) {
        if (opened.kind === "missing") return null;
        return { error: opened.kind === "symlink" ? "a symbolic link" : describe(opened) };
      }
      try {
        if (opened.size > limitBytes) return { error: `larger than ${limitBytes} bytes` };
        const bytes = new Uint8Array(limitBytes + 1);
        let total = 0;
        while (total < bytes.length) {
          const read = await opened.file.read(bytes.subarray(total));
          if (read === null) break;
          total += read;
        }
        if (total > limitBytes) return { error: `larger than ${limitBytes} bytes` };
        return new TextDecoder("utf-8", { fatal: true }).decode(bytes.subarray(0, total));
      } catch (error) {
        if (error instanceof TypeError) return { error: "not UTF-8" };
        return { error: errorName(error) };
      } finally {
        opened.file.close();
      }
    },
  };
}
