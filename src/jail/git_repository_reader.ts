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
import { CheckBudget } from "./budget.ts";
import { listFolder, walkTree } from "./list_folder.ts";
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
 * The bytes of a regular file of the jail, read never through a link, at
 * any component, even one swapped in while it reads (`open_regular.ts`):
 * the server reads with its own rights.
 */
async function readBytes(
  jailRoot: string,
  path: string,
  limitBytes: number,
): Promise<Uint8Array | null | { readonly error: string }> {
  const opened = await openRegularInJail(jailRoot, path);
  if (!opened.ok) {
    if (opened.kind === "missing") return null;
    return { error: opened.kind === "symlink" ? "a symbolic link" : describe(opened) };
  }
  try {
    if (opened.size > limitBytes) return { error: `larger than ${limitBytes} bytes` };
    // The size fstat saw, and one byte more to catch a file that grew.
    const bytes = new Uint8Array(opened.size + 1);
    let total = 0;
    while (total < bytes.length) {
      const read = await opened.file.read(bytes.subarray(total));
      if (read === null) break;
      total += read;
    }
    if (total > opened.size) return { error: "it changed while it was read" };
    return bytes.subarray(0, total);
  } catch (error) {
    return { error: errorName(error) };
  } finally {
    opened.file.close();
  }
}

/**
 * A reader for the jail at `jailRoot`.
 *
 * @param jailRoot The jail's real path.
 * @param budget The call's budget, whose lister lists folders (through the
 *   executor's helper, by descriptor: a folder swapped for a link to a host
 *   folder while it is listed must not have its names quoted in a refusal).
 */
export function gitRepositoryReader(
  jailRoot: string,
  budget: CheckBudget = new CheckBudget(),
): GitRepositoryReader {
  const listed = async (path: string) => {
    const listing = await listFolder(jailRoot, path, budget);
    return listing.ok ? listing.entries : { error: listing.why };
  };
  return {
    isInsideJail: (path) => isInside(jailRoot, path),
    // The call's budget: a resolve given a fresh one each time let a chain
    // of links cost 8,000 lookups per config value, for minutes (red team).
    resolve: (base, path) => resolveFollowingSymlinks(jailRoot, base, path, budget),
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
      const entries = await listed(path);
      if ("error" in entries) return entries;
      return entries.map((entry) => entry.name).sort();
    },
    async entries(path) {
      const entries = await listed(path);
      if ("error" in entries) return entries;
      return entries.map((entry) => ({
        name: entry.name,
        kind: entry.isSymlink
          ? "symlink" as const
          : entry.isDirectory
          ? "directory" as const
          : entry.isFile
          ? "file" as const
          : "other" as const,
      })).sort((a, b) => a.name < b.name ? -1 : a.name > b.name ? 1 : 0);
    },
    async readText(path, limitBytes) {
      const bytes = await readBytes(jailRoot, path, limitBytes);
      if (!(bytes instanceof Uint8Array)) return bytes;
      try {
        return new TextDecoder("utf-8", { fatal: true }).decode(bytes);
      } catch {
        return { error: "not UTF-8" };
      }
    },
    readBytes: (path, limitBytes) => readBytes(jailRoot, path, limitBytes),
    async walk(path) {
      const tree = await walkTree(jailRoot, path, budget);
      return tree.ok ? { links: tree.links, gits: tree.gits } : { error: tree.why };
    },
  };
}
