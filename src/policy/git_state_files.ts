/**
 * Readers of the git state files that hold work-tree paths or `git apply`
 * options, which git acts on without checking them: `MERGE_RR` (rerere
 * copies each named file into `rr-cache`), `rebase-apply/apply-opt` (`git
 * am` passes it to `git apply`), and the index (checkout, restore and diff
 * open each entry's name). Without the kernel sandbox, htmcp's rule that only
 * git works in a git folder keeps a model from writing them
 * (`src/plan/git_folder_paths.ts`); these readers let the repository check
 * refuse a repository handed to the jail with such files already planted.
 * Pure: bytes and text in, verdicts out.
 *
 * @module
 */

/**
 * Whether `path` is a path git may join to the work tree: relative, with no
 * empty, `.` or `..` segment and no `.git` segment in any case (what git's
 * own `verify_path` requires of what it writes). A sparse index's folder
 * entry may end in one `/`.
 */
export function isCleanTreePath(path: string): boolean {
  const trimmed = path.endsWith("/") ? path.slice(0, -1) : path;
  if (trimmed === "" || trimmed.startsWith("/")) return false;
  return trimmed.split("/").every((segment) =>
    segment !== "" && segment !== "." && segment !== ".." && segment.toLowerCase() !== ".git"
  );
}

/**
 * The paths `MERGE_RR` names (`<hash>\t<path>\0` per conflict), or null
 * when it is not in that form.
 */
export function mergeRrPaths(text: string): string[] | null {
  const paths: string[] = [];
  const records = text.split("\0");
  // The file ends with a NUL, so the last piece is empty; any other text is malformed.
  if (records.pop() !== "") return text === "" ? [] : null;
  for (const record of records) {
    // git's read_rr: an object name (either case), an optional ".VARIANT", a tab, the path.
    const match = /^[0-9a-fA-F]{40}(?:[0-9a-fA-F]{24})?(?:\.\d+)?\t(.*)$/s.exec(record);
    if (match === null) return null;
    paths.push(match[1] as string);
  }
  return paths;
}

/** The `git apply` options `git am` saves in `apply-opt` from its own, each with no path outside. */
const SAFE_APPLY_OPTION =
  /^(--whitespace=[a-z-]+|-C\d+|-p\d+|--reject|--ignore-space-change|--ignore-whitespace|--exclude=.*|--include=.*|--directory=.*)$/s;

/**
 * The words of `apply-opt` (git's shell quoting: each word in single quotes,
 * `'\''` for a quote), or null when it is not in that form.
 */
export function applyOptWords(text: string): string[] | null {
  const words: string[] = [];
  let rest = text.replace(/\n$/, "");
  for (;;) {
    rest = rest.replace(/^ +/, "");
    if (rest === "") return words;
    const match = /^'((?:[^']|'\\'')*)'/.exec(rest);
    if (match === null) return null;
    words.push((match[1] as string).replaceAll("'\\''", "'"));
    rest = rest.slice(match[0].length);
  }
}

/**
 * The first word of `apply-opt` that `git am` would hand to `git apply` and
 * that may reach outside the work tree, or null when every word is one am
 * saves from its own options with a path that stays (`--directory` must be
 * a clean relative path).
 */
export function unsafeApplyOption(words: readonly string[]): string | null {
  for (const word of words) {
    if (!SAFE_APPLY_OPTION.test(word)) return word;
    if (word.startsWith("--directory=") && !isCleanTreePath(word.slice("--directory=".length))) {
      return word;
    }
  }
  return null;
}

/** What an index holds that matters here. */
export interface IndexNames {
  readonly names: readonly string[];
  /** The names of gitlink entries (mode 160000): submodules git enters, `.gitmodules` or not. */
  readonly gitlinks: readonly string[];
  /** A split index (`link` extension): its entries live in a `sharedindex.*` file too. */
  readonly split: boolean;
}

const ENTRY_FIXED_BYTES = 40;
/** More entries than this is no index htmcp vets (git itself caps nothing lower). */
export const MAX_INDEX_ENTRIES = 1_000_000;

/**
 * The entry names of an index file (versions 2, 3 and 4), read with object
 * names of `hashBytes` (20 for SHA-1, 32 for SHA-256), or null when the
 * bytes are not an index of that shape.
 */
export function indexEntryNames(bytes: Uint8Array, hashBytes: 20 | 32): IndexNames | null {
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  if (bytes.byteLength < 12 + hashBytes) return null;
  if (bytes[0] !== 0x44 || bytes[1] !== 0x49 || bytes[2] !== 0x52 || bytes[3] !== 0x43) return null;
  const version = view.getUint32(4);
  if (version < 2 || version > 4) return null;
  const count = view.getUint32(8);
  if (count > MAX_INDEX_ENTRIES) return null;
  const end = bytes.byteLength - hashBytes;
  const decoder = new TextDecoder("utf-8", { fatal: false });
  const names: string[] = [];
  const gitlinks: string[] = [];
  let at = 12;
  let previous: Uint8Array = new Uint8Array(0);
  for (let i = 0; i < count; i++) {
    const start = at;
    at += ENTRY_FIXED_BYTES + hashBytes;
    if (at > end) return null;
    const mode = view.getUint32(start + 24);
    if (at + 2 > end) return null;
    const flags = view.getUint16(at);
    at += 2;
    if ((flags & 0x4000) !== 0) {
      if (version < 3) return null;
      at += 2;
    }
    // git takes the name's length from the flags (12 bits; 0xFFF: longer,
    // then up to the NUL) and places the next entry by it: a NUL elsewhere
    // would make this reading and git's differ, so it is refused.
    const flagLength = flags & 0xfff;
    let name: Uint8Array;
    if (version === 4) {
      // The number of bytes to drop from the previous name (git's varint).
      let strip = 0;
      for (let shift = 0;; shift++) {
        if (at >= end || shift > 4) return null;
        const byte = bytes[at++] as number;
        strip = (strip << 7) | (byte & 0x7f);
        if ((byte & 0x80) === 0) break;
        strip += 1;
      }
      const nul = bytes.indexOf(0, at);
      if (nul === -1 || nul >= end || strip > previous.byteLength) return null;
      const suffix = bytes.subarray(at, nul);
      name = new Uint8Array(previous.byteLength - strip + suffix.byteLength);
      name.set(previous.subarray(0, previous.byteLength - strip));
      name.set(suffix, previous.byteLength - strip);
      if (flagLength !== 0xfff && flagLength !== name.byteLength) return null;
      at = nul + 1;
    } else {
      const nul = bytes.indexOf(0, at);
      if (nul === -1 || nul >= end) return null;
      name = bytes.subarray(at, nul);
      if (flagLength !== 0xfff && flagLength !== name.byteLength) return null;
      if (flagLength === 0xfff && name.byteLength < 0xfff) return null;
      // Padded with 1 to 8 NULs to a multiple of 8 from the entry's start.
      at = start + ((at - start + name.byteLength + 8) & ~7);
      if (at > end) return null;
    }
    previous = name;
    names.push(decoder.decode(name));
    // git's S_ISGITLINK tests the type bits only: a gitlink whose mode has
    // other bits set too (0160644, red team round twelve) is still one.
    if ((mode & 0o170000) === 0o160000) gitlinks.push(decoder.decode(name));
  }
  let split = false;
  while (at < end) {
    if (at + 8 > end) return null;
    const signature = String.fromCharCode(...bytes.subarray(at, at + 4));
    const size = view.getUint32(at + 4);
    if (signature === "link") split = true;
    at += 8 + size;
  }
  return at === end ? { names, gitlinks, split } : null;
}
