/**
 * The server's folder listing for its path checks, done by the helper
 * (`htmcp-spawn --list-beneath`, a call of the serving helper): openat2
 * with `RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS` from the jail root, then the
 * entries read from that descriptor. A folder renamed to and from a link
 * while it is read can then only fail the listing, never show what the link
 * leads to; in this process Deno could list only by path
 * (`src/jail/list_folder.ts`).
 *
 * @module
 */
import * as posix from "../path/mod.ts";
import { isInside } from "../jail/mod.ts";
import type {
  CheckBudget,
  FolderLister,
  FolderListing,
  TreeListing,
  TreeWalker,
} from "../jail/mod.ts";
import { callHelper } from "./helper_call.ts";
import type { ServingHelper } from "./serving_helper.ts";

/** The most listing output read for one folder: more is a refusal, never a cut list. */
export const MAX_LISTING_BYTES = 8 * 1024 * 1024;
/** A listing that takes longer is stopped and refused. */
const LISTING_TIMEOUT_MS = 5_000;

const KINDS: Readonly<Record<string, Pick<Deno.DirEntry, "isFile" | "isDirectory" | "isSymlink">>> =
  {
    d: { isFile: false, isDirectory: true, isSymlink: false },
    l: { isFile: false, isDirectory: false, isSymlink: true },
    f: { isFile: true, isDirectory: false, isSymlink: false },
    o: { isFile: false, isDirectory: false, isSymlink: false },
  };

/** A name that is not UTF-8: no path the checks build from it would name that entry. */
export class NotUtf8Name extends Error {}

/**
 * Reads `--list-beneath`'s output: a kind byte and a name, NUL-terminated,
 * per entry; null when malformed.
 *
 * @throws {NotUtf8Name} When a name is not UTF-8. Decoded leniently, `\xff`
 *   would become U+FFFD, a name that does not exist, and the walk would
 *   skip what the real entry is (the red team hid a link to `/etc` so).
 */
export function parseListing(bytes: Uint8Array): Deno.DirEntry[] | null {
  if (bytes.byteLength === 0) return [];
  if (bytes[bytes.byteLength - 1] !== 0) return null;
  // ignoreBOM: keep a leading U+FEFF, which is part of the name (round
  // seven hid a link named "\uFEFFx" as "x" behind the default).
  const decoder = new TextDecoder("utf-8", { fatal: true, ignoreBOM: true });
  const entries: Deno.DirEntry[] = [];
  let start = 0;
  while (start < bytes.byteLength) {
    const end = bytes.indexOf(0, start);
    const kind = KINDS[String.fromCharCode(bytes[start] ?? 0)];
    let name: string;
    try {
      name = decoder.decode(bytes.subarray(start + 1, end));
    } catch {
      throw new NotUtf8Name();
    }
    if (kind === undefined || name === "" || name.includes("/")) return null;
    entries.push({ name, ...kind });
    start = end + 1;
  }
  return entries;
}

/**
 * `folder`'s path below `jailRoot` as the helper takes it (`.` for the
 * root), by the jail's one is-inside predicate; null when it is not inside.
 */
function beneath(jailRoot: string, folder: string): string | null {
  if (!isInside(jailRoot, folder)) return null;
  return posix.relative(jailRoot, folder) || ".";
}

/** The most entries one `--walk-beneath` call walks; a larger tree is refused, not cut. */
export const MAX_WALK_ENTRIES = 200_000;

/**
 * Reads `--walk-beneath`'s output: a kind byte (`l` link, `g` a `.git`) and
 * a path relative to the jail, NUL-terminated, per record; null when
 * malformed.
 *
 * @throws {NotUtf8Name} When a path is not UTF-8, as `parseListing`.
 */
export function parseWalk(bytes: Uint8Array): { links: string[]; gits: string[] } | null {
  const links: string[] = [];
  const gits: string[] = [];
  if (bytes.byteLength === 0) return { links, gits };
  if (bytes[bytes.byteLength - 1] !== 0) return null;
  const decoder = new TextDecoder("utf-8", { fatal: true, ignoreBOM: true });
  let start = 0;
  while (start < bytes.byteLength) {
    const end = bytes.indexOf(0, start);
    const kind = String.fromCharCode(bytes[start] ?? 0);
    let path: string;
    try {
      path = decoder.decode(bytes.subarray(start + 1, end));
    } catch {
      throw new NotUtf8Name();
    }
    if (
      path === "" || path.startsWith("/") || path.split("/").some((s) => s === ".." || s === "")
    ) {
      return null;
    }
    if (kind === "l") links.push(path);
    else if (kind === "g") gits.push(path);
    else return null;
    start = end + 1;
  }
  return { links, gits };
}

/**
 * A tree walker that walks through `helper` in one call (`--walk-beneath`),
 * by descriptor as `helperFolderLister` lists.
 *
 * @param helper The executor's serving helper.
 * @returns The walker the executor's lister carries.
 */
export function helperTreeWalker(helper: ServingHelper): TreeWalker {
  return async (
    jailRoot: string,
    folder: string,
    budget: CheckBudget,
    intoGit: boolean,
  ): Promise<TreeListing> => {
    const relative = beneath(jailRoot, folder);
    if (relative === null) return { ok: false, why: `"${folder}" is not inside the jail` };
    const spent = budget.spend();
    if (spent !== null) return { ok: false, why: spent };
    const output = await callHelper(
      helper,
      [
        "--walk-beneath",
        jailRoot,
        relative,
        String(MAX_WALK_ENTRIES),
        intoGit ? "into" : "stop",
      ],
      { maxBytes: MAX_LISTING_BYTES, timeoutMs: LISTING_TIMEOUT_MS },
    );
    const code = output.status.code;
    const said = output.stderr.split("\n", 1)[0]?.replace(/^htmcp-spawn: /, "").trim();
    if (code === 3) return { ok: false, why: `"${folder}" is not there` };
    if (code === 4) {
      return { ok: false, why: `a folder under "${folder}" is reached through a link` };
    }
    if (code === 5) {
      return { ok: false, why: `"${folder}" holds more than ${MAX_WALK_ENTRIES} entries` };
    }
    if (output.truncated) return { ok: false, why: `"${folder}" holds more than htmcp walks` };
    if (code !== 0) {
      return { ok: false, why: `"${folder}" cannot be walked (${said || `exit ${code}`})` };
    }
    let walked: { links: string[]; gits: string[] } | null;
    try {
      walked = parseWalk(output.stdout);
    } catch (error) {
      if (!(error instanceof NotUtf8Name)) throw error;
      return { ok: false, why: `"${folder}" holds a name that is not UTF-8` };
    }
    if (walked === null) return { ok: false, why: `the walk of "${folder}" was malformed` };
    for (let i = 0; i < walked.links.length + walked.gits.length; i++) {
      const over = budget.spend();
      if (over !== null) return { ok: false, why: over };
    }
    const real = (path: string) => `${jailRoot}/${path}`;
    return { ok: true, links: walked.links.map(real), gits: walked.gits.map(real) };
  };
}

/**
 * A lister that lists through `helper`, one folder per call, and walks a
 * whole tree in one call (its `walk`).
 *
 * @param helper The executor's serving helper.
 * @returns The lister the executor hands to every call's checks.
 */
export function helperFolderLister(helper: ServingHelper): FolderLister {
  const list = async (
    jailRoot: string,
    folder: string,
    budget: CheckBudget,
  ): Promise<FolderListing> => {
    const relative = beneath(jailRoot, folder);
    if (relative === null) return { ok: false, missing: false, why: "it is not inside the jail" };
    const spent = budget.spend();
    if (spent !== null) return { ok: false, missing: false, why: spent };
    const output = await callHelper(
      helper,
      ["--list-beneath", jailRoot, relative],
      { maxBytes: MAX_LISTING_BYTES, timeoutMs: LISTING_TIMEOUT_MS },
    );
    const code = output.status.code;
    if (code === 3) return { ok: false, missing: true, why: "it is not there" };
    if (code === 4) return { ok: false, missing: false, why: "it is reached through a link" };
    if (output.truncated) {
      return { ok: false, missing: false, why: "it holds more entries than htmcp lists" };
    }
    if (code !== 0) {
      const said = output.stderr.split("\n", 1)[0]?.replace(/^htmcp-spawn: /, "").trim();
      return { ok: false, missing: false, why: `it cannot be listed (${said || `exit ${code}`})` };
    }
    let entries: Deno.DirEntry[] | null;
    try {
      entries = parseListing(output.stdout);
    } catch (error) {
      if (!(error instanceof NotUtf8Name)) throw error;
      return { ok: false, missing: false, why: "it holds a name that is not UTF-8" };
    }
    if (entries === null) return { ok: false, missing: false, why: "its listing was malformed" };
    for (let i = 0; i < entries.length; i++) {
      const over = budget.spend();
      if (over !== null) return { ok: false, missing: false, why: over };
    }
    return { ok: true, entries };
  };
  // One walk of a whole tree per call instead of a listing per folder.
  return Object.assign(list, { walk: helperTreeWalker(helper) });
}
