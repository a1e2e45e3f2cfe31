/**
 * Control characters in command output, shown compactly.
 *
 * JSON escapes every C0 control character as `\u00XX`: six bytes for one, so
 * output full of NUL bytes grew sixfold on the wire (and again inside a
 * JSON-in-JSON text block). Here each control character other than tab,
 * newline and carriage return (and DEL) becomes its Unicode "control picture"
 * (`␀` for NUL, U+2400 + code; `␡` for DEL), which JSON passes as is (three
 * bytes), and a run of four or more of the same one becomes `␀×COUNT`. The
 * count of such characters is reported beside the output so nothing is
 * silently changed.
 *
 * @module
 */

// deno-lint-ignore no-control-regex
const CONTROL = /[\x00-\x08\x0b\x0c\x0e-\x1f\x7f]/;
// deno-lint-ignore no-control-regex
const CONTROL_RUNS = /([\x00-\x08\x0b\x0c\x0e-\x1f\x7f])\1*/g;

/** A run this long or longer is written as one picture and a count. */
const RUN_MIN = 4;

/** The compact form of `text` and how many control characters it had. */
export interface Compacted {
  readonly text: string;
  readonly controlChars: number;
}

/**
 * Replaces control characters by their pictures (runs by picture and count).
 *
 * @example
 * ```ts
 * compactControls("a\0\0\0\0\0b\x07"); // { text: "a␀×5b␇", controlChars: 6 }
 * ```
 */
export function compactControls(text: string): Compacted {
  if (!CONTROL.test(text)) return { text, controlChars: 0 };
  let controlChars = 0;
  const compact = text.replace(CONTROL_RUNS, (run: string, char: string) => {
    controlChars += run.length;
    const code = char.charCodeAt(0);
    const picture = String.fromCharCode(code === 0x7f ? 0x2421 : 0x2400 + code);
    return run.length >= RUN_MIN ? `${picture}×${run.length}` : picture.repeat(run.length);
  });
  return { text: compact, controlChars };
}
