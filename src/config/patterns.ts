/**
 * Operator `[redaction] extra_patterns`, compiled at startup so a bad regex is
 * a startup error and never a runtime surprise.
 *
 * @module
 */
import type { ExtraPattern } from "./types.ts";
import { type Checked, fail, pass, quote } from "./_checked.ts";

/** Pattern names end up in `[REDACTED:<name>]`, so they stay short and plain. */
const PATTERN_NAME = /^[A-Za-z0-9_.-]{1,64}$/;

/**
 * Flags every extra pattern gets. `g`: a redactor using `String.replace` must
 * replace every occurrence, not the first. `u`: code-point semantics, so a
 * pattern never splits a surrogate pair and malformed escapes are errors.
 */
export const EXTRA_PATTERN_FLAGS = "gu";

/**
 * Texts on which a pattern must not produce a zero-length match. Deciding in
 * general whether a regex can match the empty string is not practical here
 * (lookarounds, back-references), so this is a best-effort probe; the
 * redactor must still step past empty matches.
 */
const EMPTY_MATCH_PROBES: readonly string[] = [
  "",
  " ",
  "a",
  "Z",
  "0",
  "_",
  "\n",
  "password=hunter2",
  "token: abc123",
  "Authorization: Bearer abc.def",
  Array.from({ length: 95 }, (_, i) => String.fromCharCode(32 + i)).join(""),
];

/**
 * Compiles one `{ name, regex }` entry.
 *
 * @param index 1-based position in `extra_patterns`, for the message
 * @returns the compiled pattern, or a sentence naming the key
 */
export function compileExtraPattern(
  name: string,
  source: string,
  index: number,
): Checked<ExtraPattern> {
  const key = `redaction.extra_patterns[${index}]`;
  if (!PATTERN_NAME.test(name)) {
    return fail(
      `Policy key "${key}.name" is ${
        quote(name)
      }, but a pattern name must be 1 to 64 ASCII letters, digits, "_", "." or "-".`,
    );
  }
  let regex: RegExp;
  try {
    regex = new RegExp(source, EXTRA_PATTERN_FLAGS);
  } catch (error) {
    const why = error instanceof Error
      ? error.message.replace(/^Invalid regular expression: /, "")
      : String(error);
    return fail(
      `Policy key "${key}.regex" is not a valid regular expression (JavaScript syntax, "u" flag): ${why}.`,
    );
  }
  // The pattern's own literal text finds lookaround-only patterns such as `(?=secret)`.
  const literal = source.replace(/[^A-Za-z0-9]/g, "");
  for (const probe of [...EMPTY_MATCH_PROBES, source, literal, `${literal} ${literal}`]) {
    for (const match of probe.matchAll(regex)) {
      if (match[0].length === 0) {
        return fail(
          `Policy key "${key}.regex" is ${
            quote(source)
          }, which can match the empty string; a redaction pattern must always match at least one character.`,
        );
      }
    }
  }
  return pass({ name, regex });
}
