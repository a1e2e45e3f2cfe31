/**
 * Text shown to a human who decides on it (an approval question, the
 * approval page, `htmcp approvals list`), with every character that could
 * change how the rest reads made visible: control characters (ESC, CR,
 * newline, which forge lines or move a terminal's cursor), format
 * characters (U+202E reverses what follows, zero-width ones hide) and the
 * line and paragraph separators. Each becomes `\u{XXXX}`. A folder name
 * git checked out or a command's stdin can hold any of them (red team,
 * round nine, forged a "Rule:" line in an approval question).
 *
 * @module
 */

const INVISIBLE = /[\p{Cc}\p{Cf}\p{Zl}\p{Zp}]/gu;

/**
 * `text` with control, format and separator characters as `\u{XXXX}`.
 *
 * @example
 * ```ts
 * import { visibleText } from "./visible_text.ts";
 * visibleText("src\u001b[2K\nRule: x"); // "src\\u{1B}[2K\\u{A}Rule: x"
 * ```
 */
export function visibleText(text: string): string {
  return text.replace(
    INVISIBLE,
    (char) => `\\u{${(char.codePointAt(0) ?? 0).toString(16).toUpperCase()}}`,
  );
}
