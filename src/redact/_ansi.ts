/**
 * Match views without terminal escape sequences. `grep --color=always`,
 * `ls --color`, `git -c color.ui=always` and many loggers wrap text in
 * ECMA-48 sequences. One inside a token (`ghp\x1b[m\x1b[K_...` when the
 * match was `ghp`) splits it into pieces no detector recognises; one right
 * before a token glues its final byte to it (`\x1b[32mAKIA...` reads
 * `32mAKIA...`). Neither view alone serves both, so there are two: `joined`
 * deletes each sequence (the split token is whole again) and `spaced` puts
 * one blank in its place (a token between two sequences stands alone). A
 * finding that touches a blank hides the whole sequence it stands for, so
 * no sequence is ever cut in half.
 *
 * Recognised (ECMA-48 5th ed. §5.3-5.6, ECMA-35 §13): control sequences
 * (`ESC [` parameters, intermediates, final byte), control strings (`ESC ]`
 * OSC, `ESC P` DCS, `ESC X`, `ESC ^`, `ESC _`, ended by ST `ESC \` or BEL),
 * whose introducer and terminator are removed but whose payload stays (an
 * OSC 8 hyperlink's URL may hold a password), and two- or three-character
 * escape sequences (`ESC ( B`, `ESC 7`). An ESC that starts none of these is
 * removed alone. Each sequence is read to a bound, so a hostile unterminated
 * one costs that bound at most once per ESC.
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

/**
 * The sequence whose ESC is at `at`: `[at, end)` is removed; for a control
 * string, `[payloadStart, payloadEnd)` inside it is kept.
 */
interface Sequence {
  end: number;
  payloadStart: number;
  payloadEnd: number;
}

function readSequence(text: string, at: number, out: Sequence): void {
  const n = text.length;
  const introducer = text.charCodeAt(at + 1);
  out.payloadStart = out.payloadEnd = -1;
  out.end = at + 1;
  if (introducer === 0x5b) {
    // CSI: parameter bytes 0x30-0x3F, intermediate bytes 0x20-0x2F, final 0x40-0x7E.
    let i = at + 2;
    const limit = Math.min(n, at + MAX_CSI);
    while (i < limit && text.charCodeAt(i) >= 0x30 && text.charCodeAt(i) <= 0x3f) i++;
    while (i < limit && text.charCodeAt(i) >= 0x20 && text.charCodeAt(i) <= 0x2f) i++;
    const final = text.charCodeAt(i);
    if (i < limit && final >= 0x40 && final <= 0x7e) out.end = i + 1;
    return;
  }
  if (isStringIntroducer(introducer)) {
    const limit = Math.min(n, at + MAX_STRING);
    for (let i = at + 2; i < limit; i++) {
      const c = text.charCodeAt(i);
      if (c !== BEL && c !== ESC) continue;
      if (c === ESC && text.charCodeAt(i + 1) !== BACKSLASH) return;
      out.payloadStart = at + 2;
      out.payloadEnd = i;
      out.end = c === BEL ? i + 1 : i + 2;
      return;
    }
    return;
  }
  // nF / Fp / Fe / Fs escape sequences: intermediates 0x20-0x2F, then 0x30-0x7E.
  let i = at + 1;
  while (i < n && i - at <= 3 && text.charCodeAt(i) >= 0x20 && text.charCodeAt(i) <= 0x2f) i++;
  const final = text.charCodeAt(i);
  if (final >= 0x30 && final <= 0x7e) out.end = i + 1;
}

/** The two escape-free views of a text. */
export interface AnsiViews {
  /** Sequences deleted. */
  readonly joined: MatchView;
  /** Each sequence (each side of a control string's payload) replaced by one blank. */
  readonly spaced: MatchView;
}

/**
 * The escape-free views of `text`, or null when it has no ESC (the common
 * case costs one `indexOf`).
 */
export function stripAnsi(text: string): AnsiViews | null {
  let esc = text.indexOf("\x1b");
  if (esc === -1) return null;
  const joined = new ViewBuilder(text);
  const spaced = new ViewBuilder(text);
  const seq: Sequence = { end: 0, payloadStart: -1, payloadEnd: -1 };
  let from = 0;
  while (esc !== -1) {
    joined.keep(from, esc);
    spaced.keep(from, esc);
    readSequence(text, esc, seq);
    if (seq.payloadStart === -1) {
      spaced.substitute(esc, seq.end, " ");
    } else {
      // A control string is never inside a word (a hyperlink wraps one),
      // so both views keep a boundary on each side of its payload.
      for (const view of [joined, spaced]) {
        view.substitute(esc, seq.payloadStart, " ");
        view.keep(seq.payloadStart, seq.payloadEnd);
        view.substitute(seq.payloadEnd, seq.end, " ");
      }
    }
    from = seq.end;
    esc = text.indexOf("\x1b", from);
  }
  joined.keep(from, text.length);
  spaced.keep(from, text.length);
  return { joined: joined.build()!, spaced: spaced.build()! };
}
