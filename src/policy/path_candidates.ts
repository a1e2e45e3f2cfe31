/**
 * Which arguments name, or may name, a path. The policy cannot know every
 * program's option grammar, so it over-collects: the jail (`src/jail/`)
 * then checks path-looking candidates strictly and bare words only when an
 * entry of that name exists in the cwd (a slashless symlink is a path too).
 *
 * Collected from each argument after the command word:
 *
 * - the argument itself;
 * - the text after every `=` (`--file=/etc/passwd`, `if=/etc/passwd`);
 * - for a single-dash word, each attached value that looks like a path,
 *   starting at any point a cluster of option letters could end
 *   (`-o/etc/x`, `-uo/etc/x`); so `-Isrc/../..` is checked too, and
 *   `-Isrc/x` is refused only if `/x`, read as `-I -s -r -c /x`, is outside
 *   (write the value as its own word to avoid that);
 * - the text after a leading `@` (response files, `curl -d @/etc/passwd`);
 * - the path of a `file:` URL.
 *
 * Other URLs (`https://...`) are not local paths and stay unchecked text.
 *
 * @module
 */

/**
 * Whether `text` looks like a path: absolute, starting with `~`, containing
 * `/` or `..`, or exactly `.`.
 */
export function looksLikePath(text: string): boolean {
  return text.startsWith("/") || text.startsWith("~") || text.includes("/") ||
    text.includes("..") || text === ".";
}

function fileUrlPath(word: string): string | null {
  if (!/^file:/i.test(word)) return null;
  const rest = word.slice("file:".length);
  if (!rest.startsWith("//")) return rest;
  const afterHost = rest.indexOf("/", 2);
  return afterHost === -1 ? "/" : rest.slice(afterHost);
}

/**
 * Lists the strings among `argv.slice(1)` that name or may name a path.
 *
 * @param argv The decision's argv; `argv[0]` (the command word, already
 *   resolved by the policy) is skipped.
 * @returns Candidates in order, without duplicates.
 *
 * @example
 * ```ts
 * import { pathArgumentCandidates } from "./path_candidates.ts";
 * pathArgumentCandidates(["sort", "-o/etc/x", "--file=notes"]);
 * // ["-o/etc/x", "/etc/x", "--file=notes", "notes"]
 * ```
 */
export function pathArgumentCandidates(argv: readonly string[]): readonly string[] {
  const found = new Set<string>();
  const add = (text: string) => {
    if (text.length > 0) found.add(text);
  };
  for (const word of argv.slice(1)) {
    add(word);
    for (let at = word.indexOf("="); at !== -1; at = word.indexOf("=", at + 1)) {
      add(word.slice(at + 1));
    }
    if (word.startsWith("-") && !word.startsWith("--")) {
      for (let at = 2; at < word.length && /^[A-Za-z0-9]+$/.test(word.slice(1, at)); at++) {
        const attached = word.slice(at);
        if (looksLikePath(attached)) add(attached);
      }
    }
    if (word.startsWith("@")) add(word.slice(1));
    const urlPath = fileUrlPath(word);
    if (urlPath !== null) add(urlPath);
  }
  return Object.freeze([...found]);
}
