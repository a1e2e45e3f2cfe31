/**
 * The argv splitter: POSIX quoting rules (single quotes, double quotes,
 * backslash escapes), and nothing else. It never expands a variable, glob,
 * brace, tilde or substitution; shell syntax that would need one is refused
 * (see `metacharacters.ts`) instead of being passed on with a meaning the
 * author did not intend. It runs once per call, on the caller's snapshot of
 * the command text, and its argv is what runs: nothing downstream splits
 * again.
 *
 * @module
 */

import { findRefusedAnywhere, UNQUOTED_OPERATORS } from "./metacharacters.ts";
import type { PolicyRefusalCode, TokenizeResult } from "./types.ts";

/** One word of the command, and whether any quoting or escaping built it. */
export interface Word {
  readonly text: string;
  /** True when a quote or backslash contributed to the word (`"rm"`, `r\m`, `''`). */
  readonly quoted: boolean;
}

/** Words with their quoting, for the policy engine's command-word checks. */
export type SplitResult =
  | { readonly ok: true; readonly words: readonly Word[] }
  | { readonly ok: false; readonly code: PolicyRefusalCode; readonly reason: string };

const SHELL_NOTE = "htmcp runs no shell; quote it to pass it as plain data.";

function refuse(code: PolicyRefusalCode, reason: string): SplitResult {
  return { ok: false, code, reason };
}

/**
 * Splits `raw` into words and records which were quoted.
 *
 * @param raw The command text exactly as the client sent it.
 * @returns The words, or a refusal: `POLICY_DENIED` for shell syntax,
 *   `PARSE_ERROR` for unbalanced quotes, a trailing backslash or no words.
 * @throws {TypeError} When `raw` is not a string (a caller bug).
 */
export function splitWords(raw: string): SplitResult {
  if (typeof raw !== "string") throw new TypeError("splitWords() expects a string.");
  const anywhere = findRefusedAnywhere(raw);
  if (anywhere !== null) return refuse("POLICY_DENIED", anywhere);

  const characters = Array.from(raw);
  const words: Word[] = [];
  let text = "";
  let inWord = false;
  let quoted = false;
  let state: "plain" | "single" | "double" = "plain";
  // The previous character when it was added unquoted: a shell expands `~`
  // after an unquoted `=` or `:` (`--dir=~/x`, `PATH=a:~/b`).
  let previousPlain: string | null = null;

  for (let index = 0; index < characters.length; index++) {
    const character = characters[index] as string;
    if (state === "single") {
      // POSIX: inside single quotes every character is literal, backslash too.
      if (character === "'") state = "plain";
      else text += character;
      continue;
    }
    if (state === "double") {
      if (character === '"') {
        state = "plain";
      } else if (character === "\\") {
        // POSIX: inside double quotes a backslash escapes only $ ` " \ and
        // newline; `$`, backtick and newline never get this far.
        const next = characters[index + 1];
        if (next === '"' || next === "\\") {
          text += next;
          index++;
        } else {
          text += character;
        }
      } else {
        text += character;
      }
      continue;
    }
    if (character === " " || character === "\t") {
      if (inWord) words.push({ text, quoted });
      text = "";
      inWord = false;
      quoted = false;
      previousPlain = null;
      continue;
    }
    if (character === "'" || character === '"') {
      state = character === "'" ? "single" : "double";
      inWord = true;
      quoted = true;
      previousPlain = null;
      continue;
    }
    if (character === "\\") {
      const next = characters[index + 1];
      if (next === undefined) {
        return refuse(
          "PARSE_ERROR",
          "The command ends with a backslash that escapes nothing.",
        );
      }
      text += next;
      index++;
      inWord = true;
      quoted = true;
      previousPlain = null;
      continue;
    }
    const operator = UNQUOTED_OPERATORS.get(character);
    if (operator !== undefined) {
      return refuse(
        "POLICY_DENIED",
        `The command contains "${character}" outside quotes, which a shell treats as ${operator}; ${SHELL_NOTE}`,
      );
    }
    if (character === "#" && !inWord) {
      return refuse(
        "POLICY_DENIED",
        `The command has a word starting with "#" outside quotes, which a shell treats as a comment; ${SHELL_NOTE}`,
      );
    }
    if (character === "~" && (!inWord || previousPlain === "=" || previousPlain === ":")) {
      return refuse(
        "POLICY_DENIED",
        `The command contains "~" where a shell would expand it to a home folder; ${SHELL_NOTE}`,
      );
    }
    text += character;
    inWord = true;
    previousPlain = character;
  }

  if (state !== "plain") {
    const quote = state === "single" ? "'" : '"';
    return refuse("PARSE_ERROR", `The command has an unbalanced ${quote} quote.`);
  }
  if (inWord) words.push({ text, quoted });
  if (words.length === 0) return refuse("PARSE_ERROR", "The command is empty.");
  return { ok: true, words: Object.freeze(words) };
}

/**
 * Takes an argv that something else already split (the operator's shell, for
 * `htmcp explain -- grep "a b" file`) as words, without splitting it again:
 * joining and re-splitting would turn `"a b"` into two words and judge a
 * command nobody asked about. Each word is data, as if quoted, so only the
 * characters refused anywhere (`$`, backtick, controls, odd spaces) are
 * refused here; the command word gets the usual spelling checks later.
 *
 * @param argv The words, command word first.
 * @returns The words (none marked quoted: the shell already removed its
 *   quotes), or the same refusals {@linkcode splitWords} gives.
 * @throws {TypeError} When `argv` holds a non-string.
 */
export function wordsFromArgv(argv: readonly string[]): SplitResult {
  const words: Word[] = [];
  for (const text of argv) {
    if (typeof text !== "string") throw new TypeError("wordsFromArgv() expects strings.");
    const anywhere = findRefusedAnywhere(text);
    if (anywhere !== null) return refuse("POLICY_DENIED", anywhere);
    words.push({ text, quoted: false });
  }
  if (words.length === 0 || words[0]?.text === "") {
    return refuse("PARSE_ERROR", "The command is empty.");
  }
  return { ok: true, words: Object.freeze(words) };
}

/**
 * Splits raw command text into argv with POSIX quoting and no expansion.
 *
 * @param raw The command text exactly as the client sent it.
 * @returns The frozen argv, or `POLICY_DENIED` (shell syntax) /
 *   `PARSE_ERROR` (unbalanced quotes, trailing backslash, empty command).
 * @throws {TypeError} When `raw` is not a string.
 *
 * @example
 * ```ts
 * import { tokenize } from "./tokenize.ts";
 * const result = tokenize(`grep -n "a b" 'c|d'`);
 * // result: { ok: true, argv: ["grep", "-n", "a b", "c|d"] }
 * ```
 */
export function tokenize(raw: string): TokenizeResult {
  const split = splitWords(raw);
  if (!split.ok) return split;
  return { ok: true, argv: Object.freeze(split.words.map((word) => word.text)) };
}
