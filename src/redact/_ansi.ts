/**
 * The match view without terminal escape sequences. `grep --color=always`,
 * `ls --color`, `git -c color.ui=always` and many loggers wrap text in
 * ECMA-48 sequences; one inside a token (`ghp\x1b[m\x1b[K_...` when the
 * match was `ghp`) splits it into pieces no detector recognises.
 *
 * Recognised (ECMA-48 5th ed. §5.3-5.6, ECMA-35 §13): control sequences
 * (`ESC [` parameters, intermediates, final byte), control strings (`ESC ]`
 * OSC, `ESC P` DCS, `ESC X`, `ESC ^`, `ESC _`, ended by ST `ESC \` or BEL)
 * and two- or three-character escape sequences (`ESC ( B`, `ESC 7`). An ESC
 * that starts none of these is removed alone. Each sequence is read to a
 * bound, so a hostile unterminated one costs that bound at most once per ESC.
 *
 * @module
 */
import { type MatchView, ViewBuilder } from "./_match_view.ts";

const ESC = 0x1b;
const BEL = 0x07;
const BACKSLASH = 0x5c;
/** Longest control sequence read (parameters included). */
const MAX_CSI = 256;
/** Longest control string read (an OSC 8 hyperlink carries a URL). */
const MAX_STRING = 4096;

/** Introducers of control strings: OSC, DCS, SOS, PM, APC. */
function isStringIntroducer(c: number): boolean {
  return c === 0x5d || c === 0x50 || c === 0x58 || c === 0x5e || c === 0x5f;
}

/** The index after the sequence whose ESC is at `at`; `at + 1` when none starts there. */
function sequenceEnd(text: string, at: number): number {
  const n = text.length;
  const introducer = text.charCodeAt(at + 1);
  if (introducer === 0x5b) {
    // CSI: parameter bytes 0x30-0x3F, intermediate bytes 0x20-0x2F, final 0x40-0x7E.
    let i = at + 2;
    const limit = Math.min(n, at + MAX_CSI);
    while (i < limit && text.charCodeAt(i) >= 0x30 && text.charCodeAt(i) <= 0x3f) i++;
    while (i < limit && text.charCodeAt(i) >= 0x20 && text.charCodeAt(i) <= 0x2f) i++;
    const final = text.charCodeAt(i);
    return i < limit && final >= 0x40 && final <= 0x7e ? i + 1 : at + 1;
  }
  if (isStringIntroducer(introducer)) {
    const limit = Math.min(n, at + MAX_STRING);
    for (let i = at + 2; i < limit; i++) {
      const c = text.charCodeAt(i);
      if (c === BEL) return i + 1;
      if (c === ESC) return text.charCodeAt(i + 1) === BACKSLASH ? i + 2 : at + 1;
    }
    return at + 1;
  }
  // nF / Fp / Fe / Fs escape sequences: intermediates 0x20-0x2F, then 0x30-0x7E.
  let i = at + 1;
  while (i < n && i - at <= 3 && text.charCodeAt(i) >= 0x20 && text.charCodeAt(i) <= 0x2f) i++;
  const final = text.charCodeAt(i);
  return final >= 0x30 && final <= 0x7e ? i + 1 : at + 1;
}

/**
 * `text` without its escape sequences, or null when it has none (the
 * common case costs one `indexOf`).
 */
export function stripAnsi(text: string): MatchView | null {
  let esc = text.indexOf("\x1b");
  if (esc === -1) return null;
  const view = new ViewBuilder(text);
  let from = 0;
  while (esc !== -1) {
    view.keep(from, esc);
    from = sequenceEnd(text, esc);
    esc = text.indexOf("\x1b", from);
  }
  view.keep(from, text.length);
  return view.build();
}
