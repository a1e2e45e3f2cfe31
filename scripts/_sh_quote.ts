/**
 * Quoting for the POSIX shell text the launcher and the installed script
 * share.
 *
 * @module
 */

/** `text` quoted for a POSIX shell: one word, whatever it holds. */
export function shQuote(text: string): string {
  return `'${text.replaceAll("'", `'"'"'`)}'`;
}
