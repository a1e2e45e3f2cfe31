/**
 * Which characters count as shell syntax, and why each is refused.
 *
 * htmcp never runs a shell, so shell syntax cannot do what its author meant:
 * `a; b` would reach the program as the words `a;` and `b`. A model that
 * writes shell syntax believes something will happen that will not, and the
 * gap between its belief and our behaviour is where bypasses live. So we
 * refuse shell syntax outright instead of passing it on as data.
 *
 * Quoting keeps its POSIX meaning of "literal data" (the plan lexer,
 * `lex.ts`, applies these by quoting context):
 *
 * - Refused anywhere, even inside quotes: every control or format character
 *   (NUL, line breaks, ESC, bidi and zero-width marks, Unicode line/paragraph
 *   separators; TAB alone is allowed as a word separator), lone surrogates,
 *   and Unicode spaces other than U+0020 (they look like word breaks but are
 *   not).
 * - `$` and backtick: refused outside quotes and inside double quotes (a
 *   shell expands them there); plain text inside single quotes, where no
 *   shell expands anything (`grep 'foo$'`, `awk '{print $1}'`).
 * - Outside quotes: the operators htmcp models itself (`|`, `&&`, `||`, `;`,
 *   `<`, `>`, `>>`, `2>`, `2>&1`) become a plan; every other shell construct
 *   (`&`, `( )`, `{ }`, `!`, here-documents, process substitution, a `#`
 *   comment, a `~` a shell would expand) is refused; `* ? [` are globs that
 *   htmcp expands inside the jail.
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

/** Describes a code point for a refusal sentence, e.g. `U+000A`. */
export function describeCodePoint(character: string): string {
  const codePoint = character.codePointAt(0) ?? 0;
  return `U+${codePoint.toString(16).toUpperCase().padStart(4, "0")}`;
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
