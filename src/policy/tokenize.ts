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

import { lexPlan } from "./lex.ts";
import { findRefusedCodePoint, UNQUOTED_OPERATORS } from "./metacharacters.ts";
import type { PolicyRefusalCode, TokenizeResult } from "./types.ts";

/** One word of the command, and whether any quoting or escaping built it. */
export interface Word {
  /** The word after quote removal, as the program will receive it. */
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
 * Splits `raw` into the words of one plain command and records which were
 * quoted: the plan lexer's words, refused when the text composes commands
 * (pipes, sequences, redirections) or holds a glob, which only a plan models.
 *
 * @param raw The command text exactly as the client sent it.
 * @returns The words, or a refusal: `POLICY_DENIED` for shell syntax,
 *   `PARSE_ERROR` for unbalanced quotes, a trailing backslash or no words.
 * @throws {TypeError} When `raw` is not a string (a caller bug).
 */
export function splitWords(raw: string): SplitResult {
  if (typeof raw !== "string") throw new TypeError("splitWords() expects a string.");
  const lexed = lexPlan(raw);
  if (!lexed.ok) return lexed;
  const words: Word[] = [];
  for (const token of lexed.tokens) {
    if (token.type === "op") {
      const what = UNQUOTED_OPERATORS.get(token.text.replace(/^[0-9]/, "")[0] ?? "") ??
        "an operator";
      return refuse(
        "POLICY_DENIED",
        `The command contains "${token.text}" outside quotes, which a shell treats as ${what}; ` +
          `a single command cannot use it (${SHELL_NOTE})`,
      );
    }
    if (token.word.globAt.length > 0) {
      const at = token.word.globAt[0] as number;
      return refuse(
        "POLICY_DENIED",
        `The command contains "${token.word.text[at]}" outside quotes, which a shell treats as ` +
          `a filename glob; a single command cannot use it (${SHELL_NOTE})`,
      );
    }
    words.push({ text: token.word.text, quoted: token.word.quoted });
  }
  if (words.length === 0) return refuse("PARSE_ERROR", "The command is empty.");
  return { ok: true, words: Object.freeze(words) };
}

/**
 * Takes an argv that something else already split (the operator's shell, for
 * `htmcp explain -- grep "a b" file`) as words, without splitting it again:
 * joining and re-splitting would turn `"a b"` into two words and judge a
 * command nobody asked about. Each word is data, as if single-quoted (no
 * shell will see it, so `$` and backticks are plain text), and only the
 * characters refused anywhere (controls, line breaks, odd spaces) are
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
    const anywhere = findRefusedCodePoint(text);
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
