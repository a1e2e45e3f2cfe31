/**
 * Which characters count as shell syntax, and why each is refused.
 *
 * htmcp never runs a shell, so shell syntax cannot do what its author meant:
 * `a; b` would reach the program as the words `a;` and `b`. A model that
 * writes shell syntax believes something will happen that will not, and the
 * gap between its belief and our behaviour is where bypasses live. So we
 * refuse shell syntax outright instead of passing it on as data.
 *
 * Two tiers, chosen so quoting keeps its POSIX meaning of "literal data":
 *
 * - Refused anywhere, even inside quotes: `$` and backtick (a shell expands
 *   them inside double quotes, and `$'..'` rewrites single-quoted text in
 *   bash), every control or format character (NUL, line breaks, ESC, bidi and
 *   zero-width marks, Unicode line/paragraph separators; TAB alone is allowed
 *   as a word separator), lone surrogates, and Unicode spaces other than
 *   U+0020 (they look like word breaks but are not).
 * - Refused only outside quotes: command separators and redirections
 *   `; | & < > ( )`, globs `* ? [`, braces `{ }`, history `!`, a `#` that
 *   starts a comment, and a `~` that a shell would expand to a home folder.
 *   Quoted, these are ordinary bytes to the program (`grep 'a|b'`), and a
 *   backslash-escaped one (`\;`) is quoted too.
 *
 * @module
 */

/** Why each character is refused outside quotes. */
export const UNQUOTED_OPERATORS: ReadonlyMap<string, string> = new Map([
  [";", "a command separator"],
  ["|", "a pipe"],
  ["&", "a background or AND operator"],
  ["<", "an input redirection or process substitution"],
  [">", "an output redirection or process substitution"],
  ["(", "a subshell or process substitution"],
  [")", "a subshell or process substitution"],
  ["*", "a filename glob"],
  ["?", "a filename glob"],
  ["[", "a filename glob"],
  ["{", "brace expansion or a command group"],
  ["}", "brace expansion or a command group"],
  ["!", "history expansion or pipeline negation"],
]);

/**
 * Code points refused wherever they appear: controls, format characters,
 * surrogates, private-use and unassigned code points (`\p{C}`), Unicode line
 * and paragraph separators, and every space that is not U+0020.
 */
const REFUSED_ANYWHERE = /[\p{C}\p{Zl}\p{Zp}\p{Zs}]/u;

/** Characters a shell expands even inside double quotes. */
const EXPANSION_CHARACTERS: ReadonlyMap<string, string> = new Map([
  ["$", "variable, arithmetic or command substitution"],
  ["`", "command substitution"],
]);

/** Describes a code point for a refusal sentence, e.g. `U+000A`. */
export function describeCodePoint(character: string): string {
  const codePoint = character.codePointAt(0) ?? 0;
  return `U+${codePoint.toString(16).toUpperCase().padStart(4, "0")}`;
}

/**
 * Finds the first character that is refused wherever it appears, and returns
 * the refusal sentence, or null when there is none.
 */
export function findRefusedAnywhere(raw: string): string | null {
  for (const character of raw) {
    const expansion = EXPANSION_CHARACTERS.get(character);
    if (expansion !== undefined) {
      return `The command contains "${character}", which a shell treats as ${expansion}; ` +
        `htmcp runs no shell and refuses it even inside quotes.`;
    }
  }
  return findRefusedCodePoint(raw);
}

/**
 * Finds the first code point refused wherever it appears (controls, format
 * characters, line breaks, non-ASCII spaces: never data a model means to
 * type, and each a known way to smuggle a separator past a reader), and
 * returns the refusal sentence, or null. `$` and backtick are not judged
 * here: the plan parser refuses them by quoting context (literal inside
 * single quotes, as in every POSIX shell).
 */
export function findRefusedCodePoint(raw: string): string | null {
  for (const character of raw) {
    if (character === "\t" || character === " ") continue;
    if (REFUSED_ANYWHERE.test(character)) {
      const what = character === "\n" || character === "\r" ||
          character === "\u2028" || character === "\u2029" || character === "\u0085"
        ? "a line break, which a shell treats as a command separator"
        : "a control, format or non-ASCII space character";
      return `The command contains ${describeCodePoint(character)}, ${what}; ` +
        `htmcp refuses it anywhere in the command.`;
    }
  }
  return null;
}
