/**
 * Match views: the text a command printed, with the parts of its rendering
 * that hide secrets from the detectors removed (terminal escape sequences,
 * line prefixes such as `path:12:` or `cat -n` numbers), plus the way back
 * from an index in the view to an index in the printed text.
 *
 * A view only ever deletes stretches of its source, so every view character
 * is a source character and the map back is a sorted list of kept segments.
 * A finding `[start, end)` in the view covers the source from its first to
 * its last character, including whatever was deleted in between: a token
 * split by colour escapes is hidden with the escapes inside it.
 *
 * @module
 */

/** A text derived from a source by deletions, with the map back. */
export interface MatchView {
  /** What the detectors read. */
  readonly text: string;
  /** The source index of view index `at` (`0 <= at < text.length`). */
  readonly toSource: (at: number) => number;
  /**
   * The source index after view character `at`: `toSource(at) + 1`, except
   * for a character that stands for a deleted stretch (a blank put in place
   * of an escape sequence), whose stretch it ends.
   */
  readonly toSourceEnd: (at: number) => number;
}

/** Builds a view from kept stretches of a source, in order. */
export class ViewBuilder {
  readonly #source: string;
  readonly #parts: string[] = [];
  /** Start of each kept segment, in the view and in the source. */
  readonly #viewStarts: number[] = [];
  readonly #sourceStarts: number[] = [];
  /** For a substituted character's segment, the end of what it replaced; else -1. */
  readonly #replacedEnds: number[] = [];
  #length = 0;
  /** The segment being extended: `source[#from, #to)`, not yet sliced. */
  #from = 0;
  #to = 0;
  #deleted = false;

  constructor(source: string) {
    this.#source = source;
  }

  /** Keeps `source[start, end)`; calls must come in source order without overlap. */
  keep(start: number, end: number): void {
    if (end <= start) return;
    if (start === this.#to && (this.#to > this.#from || start === 0)) {
      this.#to = end;
      return;
    }
    this.#flush();
    this.#deleted = true;
    this.#from = start;
    this.#to = end;
  }

  /**
   * Puts `char` in the view in place of the deleted `source[start, end)`;
   * it maps back to `start`. Calls must come in source order.
   */
  substitute(start: number, end: number, char: string): void {
    this.#flush();
    this.#deleted = true;
    this.#viewStarts.push(this.#length);
    this.#sourceStarts.push(start);
    this.#replacedEnds.push(end);
    this.#parts.push(char);
    this.#length += char.length;
    this.#from = end;
    this.#to = end;
  }

  #flush(): void {
    if (this.#to <= this.#from) return;
    this.#viewStarts.push(this.#length);
    this.#sourceStarts.push(this.#from);
    this.#replacedEnds.push(-1);
    this.#parts.push(this.#source.slice(this.#from, this.#to));
    this.#length += this.#to - this.#from;
  }

  /**
   * The view, mapped through `parent` when the source was itself a view;
   * null when nothing was deleted (the view would be its source).
   */
  build(parent: MatchView | null = null): MatchView | null {
    if (!this.#deleted && this.#from === 0 && this.#to === this.#source.length) return null;
    this.#flush();
    this.#from = this.#to;
    const viewStarts = Int32Array.from(this.#viewStarts);
    const sourceStarts = Int32Array.from(this.#sourceStarts);
    const replacedEnds = Int32Array.from(this.#replacedEnds);
    const segment = (at: number): number => {
      let lo = 0;
      let hi = viewStarts.length - 1;
      while (lo < hi) {
        const mid = (lo + hi + 1) >> 1;
        if (viewStarts[mid]! <= at) lo = mid;
        else hi = mid - 1;
      }
      return lo;
    };
    const local = (at: number): number => {
      const i = segment(at);
      return sourceStarts[i]! + (at - viewStarts[i]!);
    };
    const localEnd = (at: number): number => {
      const i = segment(at);
      const replaced = replacedEnds[i]!;
      return replaced !== -1 ? replaced : sourceStarts[i]! + (at - viewStarts[i]!) + 1;
    };
    const toSource = parent === null ? local : (at: number) => parent.toSource(local(at));
    const toSourceEnd = parent === null
      ? localEnd
      : (at: number) => parent.toSourceEnd(localEnd(at) - 1);
    return { text: this.#parts.join(""), toSource, toSourceEnd };
  }
}

/**
 * The source stretch a view finding `[start, end)` stands for: from its
 * first character to its last, with everything deleted between them.
 */
export function sourceSpan(
  view: MatchView,
  start: number,
  end: number,
): { start: number; end: number } {
  return { start: view.toSource(start), end: view.toSourceEnd(end - 1) };
}
