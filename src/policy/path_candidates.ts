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
 * - for a single-dash word, each attached value, starting at any point a
 *   cluster of option letters could end (`-o/etc/x`, `-uo/etc/x`, and
 *   `-frl` as `rl` and `l`); so `-Isrc/../..` is checked too, and
 *   `-Isrc/x` is refused only if `/x`, read as `-I -s -r -c /x`, is outside
 *   (write the value as its own word to avoid that). A bare value is a path
 *   too: `date -frl` reads the file `rl`, and the jail checks a bare word
 *   whenever an entry of that name exists, as for `date -f rl`;
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
 *
 * @param text One argument or candidate.
 * @returns True when the jail should treat `text` as a path to check.
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
 * The path a tool opens for a `file:` URL, as the tool reads it: percent
 * escapes decoded (curl opened `file:///jail/%2e%2e/secret`, red team), or
 * null when it cannot be decoded.
 */
function decodedUrlPath(path: string): string | null {
  try {
    return decodeURIComponent(path);
  } catch {
    return null;
  }
}

/** A `file:` URL with a pattern: curl expands `{a,b}` and `[1-3]` into paths no check sees. */
const URL_PATTERN = /[{}[\]]/;

/** The most argument words whose paths htmcp checks in one command. */
export const MAX_PATH_WORDS = 4096;
/**
 * The most candidate text, summed over candidates, checked for one command.
 * Each `=` and each attached-value position yields a suffix of its word, so
 * a word like `x/..=x/..=...` holds quadratically many bytes of candidates:
 * the sum is counted first, in one pass, and over this budget the command
 * is refused before any suffix is built or looked up.
 */
export const MAX_CANDIDATE_BYTES = 131_072;

/**
 * The candidates, or why there are too many to check: past the bounds the
 * command is refused rather than checked in part.
 */
export type CandidateResult =
  | { readonly ok: true; readonly candidates: readonly string[] }
  | { readonly ok: false; readonly reason: string };

/** Start offsets of the suffixes of `word` that are candidates (besides `word` itself). */
function suffixStarts(word: string): number[] {
  const starts: number[] = [];
  for (let at = word.indexOf("="); at !== -1; at = word.indexOf("=", at + 1)) starts.push(at + 1);
  if (word.startsWith("-") && !word.startsWith("--")) {
    // The option letters run from 1 to `lettersEnd`; an attached value may
    // start after any of them, and every such suffix is a candidate: which
    // letter takes a value is the program's to know, and a slashless value
    // names an entry of the cwd as a separate word does.
    let lettersEnd = 1;
    while (lettersEnd < word.length && /[A-Za-z0-9]/.test(word[lettersEnd] as string)) lettersEnd++;
    for (let at = 2; at <= lettersEnd && at < word.length; at++) starts.push(at);
  }
  if (word.startsWith("@")) starts.push(1);
  return starts;
}

/**
 * Lists the strings among `argv.slice(1)` that name or may name a path,
 * within the bounds above.
 *
 * @param argv The decision's argv; `argv[0]` (the command word, already
 *   resolved by the policy) is skipped.
 * @returns Candidates in order, without duplicates; or the refusal sentence
 *   when the command holds more words or candidate text than htmcp checks.
 *
 * @example
 * ```ts
 * import { pathArgumentCandidates } from "./path_candidates.ts";
 * pathArgumentCandidates(["sort", "-o/etc/x", "--file=notes"]);
 * // { ok: true, candidates: ["-o/etc/x", "/etc/x", "--file=notes", "notes"] }
 * ```
 */
export function pathArgumentCandidates(argv: readonly string[]): CandidateResult {
  const words = argv.slice(1);
  if (words.length > MAX_PATH_WORDS) {
    return {
      ok: false,
      reason:
        `The command has ${words.length} arguments; htmcp checks the paths of at most ${MAX_PATH_WORDS}. Split it into smaller commands.`,
    };
  }
  const plan = words.map((word) => ({ word, starts: suffixStarts(word) }));
  let total = 0;
  for (const { word, starts } of plan) {
    total += word.length;
    for (const start of starts) total += word.length - start;
  }
  if (total > MAX_CANDIDATE_BYTES) {
    return {
      ok: false,
      reason:
        `The arguments hold ${total} characters of possible paths (every text after "=" or an option letter counts); htmcp checks at most ${MAX_CANDIDATE_BYTES}. Shorten the arguments or split the command.`,
    };
  }
  const found = new Set<string>();
  const add = (text: string) => {
    if (text.length > 0) found.add(text);
  };
  for (const { word, starts } of plan) {
    add(word);
    for (const start of starts) add(word.slice(start));
    const urlPath = fileUrlPath(word);
    if (urlPath !== null) {
      const decoded = decodedUrlPath(urlPath);
      if (decoded === null || URL_PATTERN.test(urlPath)) {
        return {
          ok: false,
          reason:
            `The file: URL "${word}" holds a pattern or an escape that cannot be read, which a tool would expand into paths no check sees; write the path out plainly.`,
        };
      }
      add(urlPath);
      add(decoded);
    }
  }
  return { ok: true, candidates: Object.freeze([...found]) };
}
