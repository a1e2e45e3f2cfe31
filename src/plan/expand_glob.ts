/**
 * Glob expansion done by htmcp, inside the jail, instead of by a shell.
 *
 * A word's unquoted `*`, `?` and `[...]` (the positions the lexer recorded)
 * are matched against directory entries, segment by segment, starting at
 * the command's working folder. What a shell would do, with these
 * differences, each chosen for safety:
 *
 * - Patterns are relative: an absolute pattern would list folders outside
 *   the jail, so it is refused.
 * - No folder outside the jail is ever listed: before a folder is read, its
 *   real path must be inside the jail (a symlinked folder leading out is a
 *   refusal, not a silent skip), and it is read by that real path the
 *   call's way (`listFolder`: the executor's helper, by descriptor beneath
 *   the jail, so a folder swapped for a link while it is read is a refusal).
 *   Matches themselves are confined afterwards like any path argument, so a
 *   match that is a symlink out is refused.
 * - The call's check budget bounds it: one lookup per folder and per entry
 *   read, and the checks' deadline, so a pattern over a huge folder cannot
 *   hold the call (or the server's call slots) past it.
 * - A match that starts with `-` in the working folder is passed as `./-x`,
 *   so a file named `-rf` can never become an option (a classic injection
 *   through shell globs).
 * - Results are sorted by code unit (the C locale), bounded in number and
 *   in folders read; `*` and `?` do not match a leading `.` (as in sh).
 * - No match: the word is passed as typed, as sh does without `nullglob`,
 *   so the command reports the missing file itself.
 *
 * @module
 */

import * as posix from "../path/mod.ts";
import { CheckBudget, isInside, listFolder } from "../jail/mod.ts";
import type { PlanWord } from "./types.ts";

/** Bounds on one call's glob work. */
export interface GlobLimits {
  /** Paths one word may expand to. */
  readonly maxMatches: number;
  /** Folders one word's expansion may read. */
  readonly maxFoldersRead: number;
}

/** The bounds in force: a word that would pass either is refused, not cut short. */
export const GLOB_LIMITS: GlobLimits = Object.freeze({ maxMatches: 1000, maxFoldersRead: 200 });

/** The expansion of one word. */
export type GlobResult =
  | { readonly ok: true; readonly words: readonly string[] }
  | { readonly ok: false; readonly reason: string };

/** One path segment: its text and which of its characters are pattern characters. */
interface Segment {
  readonly text: string;
  readonly special: ReadonlySet<number>;
}

function splitSegments(word: PlanWord): Segment[] {
  const special = new Set(word.globAt);
  const segments: Segment[] = [];
  let start = 0;
  for (let index = 0; index <= word.text.length; index++) {
    if (index === word.text.length || word.text[index] === "/") {
      const marks = new Set<number>();
      for (const at of special) if (at >= start && at < index) marks.add(at - start);
      segments.push({ text: word.text.slice(start, index), special: marks });
      start = index + 1;
    }
  }
  return segments;
}

const REGEX_SPECIAL = /[\\^$.*+?()[\]{}|/-]/g;

/** A segment pattern as an anchored regex; literal characters are escaped. */
function segmentRegex(segment: Segment): RegExp {
  let source = "";
  const text = segment.text;
  for (let index = 0; index < text.length; index++) {
    const character = text[index] as string;
    if (!segment.special.has(index)) {
      source += character.replace(REGEX_SPECIAL, "\\$&");
      continue;
    }
    if (character === "*") source += "[^/]*";
    else if (character === "?") source += "[^/]";
    else {
      // `[...]`: a bracket expression up to the next `]` (a `]` right after
      // `[` or `[!` is literal); without a closing `]` the `[` is literal.
      let end = index + 1;
      if (text[end] === "!" || text[end] === "^") end++;
      if (text[end] === "]") end++;
      while (end < text.length && text[end] !== "]") end++;
      if (end >= text.length) {
        source += "\\[";
        continue;
      }
      let body = text.slice(index + 1, end);
      const negate = body.startsWith("!") || body.startsWith("^");
      if (negate) body = body.slice(1);
      const escaped = body.replace(/[\\\]^]/g, "\\$&");
      source += negate ? `[^/${escaped}]` : `[${escaped}]`;
      index = end;
    }
  }
  return new RegExp(`^${source}$`, "u");
}

/** The real path of `folder` when it is inside the jail, missing, or leading out. */
async function realFolder(jailRoot: string, folder: string): Promise<string | "missing" | "out"> {
  let real: string;
  try {
    real = await Deno.realPath(folder);
  } catch (error) {
    // A path that cannot be resolved for any reason but absence is treated as
    // leading out: refusing is the only safe answer to what we cannot see.
    return error instanceof Deno.errors.NotFound ? "missing" : "out";
  }
  return isInside(jailRoot, real) ? real : "out";
}

/**
 * Expands one word. A word without unquoted pattern characters is returned
 * as it is.
 *
 * @param jailRoot The jail's real path.
 * @param cwd The confined real working folder of the command.
 * @param word The word, with its unquoted pattern positions.
 * @param budget The call's check budget (lookups and deadline), shared with
 *   its path checks.
 * @returns The words to pass (sorted matches, or the word as typed when
 *   nothing matched), or a refusal sentence.
 */
export async function expandGlob(
  jailRoot: string,
  cwd: string,
  word: PlanWord,
  budget: CheckBudget = new CheckBudget(),
): Promise<GlobResult> {
  if (word.globAt.length === 0) return { ok: true, words: [word.text] };
  if (word.text.startsWith("/")) {
    return {
      ok: false,
      reason: `The pattern "${word.text}" is absolute; patterns are expanded only inside the ` +
        `jail, relative to the working folder.`,
    };
  }
  const segments = splitSegments(word);
  // Each partial match is a path relative to cwd, as the user would write it.
  let partial: string[] = [""];
  let foldersRead = 0;
  for (let index = 0; index < segments.length; index++) {
    const segment = segments[index] as Segment;
    const last = index === segments.length - 1;
    const next: string[] = [];
    if (segment.special.size === 0) {
      for (const prefix of partial) {
        next.push(prefix === "" ? segment.text : `${prefix}/${segment.text}`);
      }
      partial = next;
      continue;
    }
    const regex = segmentRegex(segment);
    const matchesDot = segment.text.startsWith(".");
    for (const prefix of partial) {
      const folder = posix.resolve(cwd, prefix === "" ? "." : prefix);
      const spent = budget.spend();
      if (spent !== null) return { ok: false, reason: `The pattern "${word.text}": ${spent}.` };
      const real = await realFolder(jailRoot, folder);
      if (real === "missing") continue;
      if (real === "out") {
        return {
          ok: false,
          reason: `The pattern "${word.text}" would list "${prefix || "."}", which leads ` +
            `outside the jail.`,
        };
      }
      if (++foldersRead > GLOB_LIMITS.maxFoldersRead) {
        return {
          ok: false,
          reason:
            `The pattern "${word.text}" reads more than ${GLOB_LIMITS.maxFoldersRead} folders.`,
        };
      }
      const listed = await listFolder(jailRoot, real, budget);
      if (!listed.ok) {
        if (listed.missing) continue;
        return {
          ok: false,
          reason: `The pattern "${word.text}" cannot list "${prefix || "."}": ${listed.why}.`,
        };
      }
      const names: string[] = [];
      for (const entry of listed.entries) {
        if (entry.name.startsWith(".") && !matchesDot) continue;
        if (!regex.test(entry.name)) continue;
        if (!last && !entry.isDirectory && !entry.isSymlink) continue;
        names.push(entry.name);
      }
      names.sort();
      for (const name of names) {
        next.push(prefix === "" ? name : `${prefix}/${name}`);
        if (next.length > GLOB_LIMITS.maxMatches) {
          return {
            ok: false,
            reason: `The pattern "${word.text}" matches more than ${GLOB_LIMITS.maxMatches} paths.`,
          };
        }
      }
    }
    partial = next;
  }
  if (partial.length === 0) return { ok: true, words: [word.text] };
  const sorted = [...partial].sort();
  return { ok: true, words: sorted.map((path) => (path.startsWith("-") ? `./${path}` : path)) };
}
