/**
 * A small, honest splitter of a bash command line into its simple commands,
 * so full-control mode can still apply the denylist (and `[[rules]]`) to the
 * first word of each. Pure.
 *
 * Best effort, and said so everywhere it is documented: this is not bash's
 * grammar. It knows quoting (`'...'`, `"..."`, `\`), the separators `;`
 * `&` `&&` `|` `||` `|&` `(` `)` and newlines, command substitution
 * (`$(...)`, backticks, also inside double quotes), process substitution
 * (`<(...)`, `>(...)`), `${...}`, arithmetic `$((...))` (skipped),
 * redirections and their targets, here-documents (their bodies are data),
 * and comments. It does not know aliases, functions, `case` patterns (a
 * pattern before `)` is judged as if it were a command: a false refusal,
 * never a miss), or what a program does with its arguments (`find -exec`,
 * `python3 -c`), and a command name built at run time (`$c`, `$(echo rm)`)
 * cannot be known before it runs; `firstWords` reports those as
 * `expanded` so the caller refuses them. The kernel sandbox is the boundary
 * in this mode; this splitter only keeps the denylist meaningful.
 *
 * @module
 */

/** One word of a simple command. */
export interface ShellWord {
  /** The word with quotes removed and escapes resolved; expansions kept as written. */
  readonly text: string;
  /** True when some part of the word is expanded by bash at run time (`$x`, `$(...)`, backticks). */
  readonly expanded: boolean;
}

/** The splitter's answer: every simple command, in order of appearance (substitutions first). */
export type SplitResult =
  | { readonly ok: true; readonly commands: readonly (readonly ShellWord[])[] }
  | { readonly ok: false; readonly reason: string };

/** Nested substitutions deeper than this are refused rather than followed. */
const MAX_DEPTH = 16;

class Unsplittable extends Error {}

const SEPARATORS = new Set([";", "&", "|", "(", ")", "\n"]);
const BLANKS = new Set([" ", "\t", "\r"]);

/**
 * Splits `text` into simple commands.
 *
 * @param text A bash command line.
 * @returns The simple commands' words, or why the text cannot be split (an
 *   unterminated quote or substitution: bash would refuse it too).
 * @example
 * ```ts
 * splitSimpleCommands("for i in 1 2; do echo $i; done > out.txt");
 * // commands: [["for","i","in","1","2"], ["do","echo","$i"], ["done"]]
 * ```
 */
export function splitSimpleCommands(text: string): SplitResult {
  const commands: ShellWord[][] = [];
  try {
    const scanner = new Scanner(text, commands, 0);
    // A ")" without its "(" is a case pattern's end at the top level; it
    // separates, as everywhere, so the words after it are judged.
    scanner.run(0, null);
  } catch (error) {
    if (error instanceof Unsplittable) return { ok: false, reason: error.message };
    throw error;
  }
  return { ok: true, commands };
}

class Scanner {
  #words: ShellWord[] = [];
  #word = "";
  #inWord = false;
  #expanded = false;
  /** The next word is a redirection's target, not an argument. */
  #target = false;
  /** Here-document delimiters waiting for the next newline. */
  #heredocs: { delimiter: string; stripTabs: boolean }[] = [];
  #pendingHeredoc: { stripTabs: boolean } | null = null;

  constructor(
    readonly text: string,
    readonly out: ShellWord[][],
    readonly depth: number,
  ) {
    if (depth > MAX_DEPTH) throw new Unsplittable("substitutions nest too deeply");
  }

  /**
   * Scans from `at` until `closer` (`)` or a backtick) at depth 0 or the end;
   * returns the index of the closer (or the text's length).
   */
  run(at: number, closer: ")" | "`" | null): number {
    const t = this.text;
    let parens = 0;
    let i = at;
    while (i < t.length) {
      const c = t[i] as string;
      if (closer === "`" && c === "`") break;
      if (c === ")" && closer === ")" && parens === 0) break;
      if (c === "\\") {
        if (t[i + 1] === "\n") {
          i += 2;
          continue;
        }
        if (i + 1 >= t.length) throw new Unsplittable("a trailing backslash");
        this.#add(t[i + 1] as string);
        i += 2;
        continue;
      }
      if (c === "'") {
        const end = t.indexOf("'", i + 1);
        if (end < 0) throw new Unsplittable("an unterminated single quote");
        this.#add(t.slice(i + 1, end));
        i = end + 1;
        continue;
      }
      if (c === '"') {
        i = this.#doubleQuoted(i + 1);
        continue;
      }
      if (c === "$") {
        i = this.#dollar(i);
        continue;
      }
      if (c === "`") {
        i = this.#substitute(i + 1, "`") + 1;
        this.#word += "`...`";
        this.#expanded = true;
        this.#inWord = true;
        continue;
      }
      if (c === "#" && !this.#inWord) {
        while (i < t.length && t[i] !== "\n") i++;
        continue;
      }
      if (BLANKS.has(c)) {
        this.#endWord();
        i++;
        continue;
      }
      if ((c === "<" || c === ">") && t[i + 1] === "(") {
        // Process substitution: its text is commands.
        this.#endWord();
        i = this.#substitute(i + 2, ")") + 1;
        this.#words.push({ text: "<(...)", expanded: true });
        continue;
      }
      if (c === "<" || c === ">" || (c === "&" && t[i + 1] === ">")) {
        i = this.#redirection(i);
        continue;
      }
      if (SEPARATORS.has(c)) {
        this.#endWord();
        this.#endCommand();
        if (c === "(") parens++;
        if (c === ")") parens--;
        i = c === "\n" ? this.#afterHeredocs(i + 1) : i + 1;
        continue;
      }
      this.#add(c);
      i++;
    }
    this.#endWord();
    this.#endCommand();
    if (closer !== null && i >= t.length) {
      throw new Unsplittable(
        closer === ")" ? 'an unterminated "$(" or "("' : "an unterminated backtick",
      );
    }
    return i;
  }

  #add(text: string): void {
    this.#word += text;
    this.#inWord = true;
  }

  #endWord(): void {
    if (!this.#inWord) return;
    const word = { text: this.#word, expanded: this.#expanded };
    if (this.#pendingHeredoc !== null) {
      this.#heredocs.push({ delimiter: word.text, ...this.#pendingHeredoc });
      this.#pendingHeredoc = null;
    } else if (!this.#target) this.#words.push(word);
    this.#target = false;
    this.#word = "";
    this.#inWord = false;
    this.#expanded = false;
  }

  #endCommand(): void {
    if (this.#words.length > 0) this.out.push(this.#words);
    this.#words = [];
  }

  /** Inside `"..."` from `at`; returns the index after the closing quote. */
  #doubleQuoted(at: number): number {
    const t = this.text;
    let i = at;
    this.#inWord = true;
    while (i < t.length) {
      const c = t[i] as string;
      if (c === '"') return i + 1;
      if (c === "\\" && i + 1 < t.length) {
        const next = t[i + 1] as string;
        if ('$`"\\'.includes(next)) this.#add(next);
        else if (next !== "\n") this.#add(`\\${next}`);
        i += 2;
        continue;
      }
      if (c === "$") {
        i = this.#dollar(i);
        continue;
      }
      if (c === "`") {
        i = this.#substitute(i + 1, "`") + 1;
        this.#word += "`...`";
        this.#expanded = true;
        continue;
      }
      this.#add(c);
      i++;
    }
    throw new Unsplittable("an unterminated double quote");
  }

  /** A `$` at `at`: substitution, arithmetic, `${...}`, `$'...'` or a variable. */
  #dollar(at: number): number {
    const t = this.text;
    const next = t[at + 1];
    this.#inWord = true;
    if (next === "(" && t[at + 2] === "(") {
      // Arithmetic: no command runs inside (a `$(` within it still does).
      const end = this.#arithmetic(at + 3);
      this.#word += t.slice(at, end);
      this.#expanded = true;
      return end;
    }
    if (next === "(") {
      const end = this.#substitute(at + 2, ")");
      this.#word += "$(...)";
      this.#expanded = true;
      return end + 1;
    }
    if (next === "{") {
      let depth = 0;
      for (let i = at + 1; i < t.length; i++) {
        if (t[i] === "{") depth++;
        else if (t[i] === "}" && --depth === 0) {
          this.#word += t.slice(at, i + 1);
          this.#expanded = true;
          return i + 1;
        } else if (t[i] === "$" && t[i + 1] === "(") {
          i = this.#substitute(i + 2, ")");
        }
      }
      throw new Unsplittable('an unterminated "${"');
    }
    if (next === "'") {
      // ANSI-C quoting: escapes such as \x73 spell any name.
      const end = t.indexOf("'", at + 2);
      if (end < 0) throw new Unsplittable("an unterminated $'...'");
      this.#word += t.slice(at, end + 1);
      this.#expanded = true;
      return end + 1;
    }
    if (next !== undefined && /[A-Za-z0-9_@*#?$!-]/.test(next)) this.#expanded = true;
    this.#word += "$";
    return at + 1;
  }

  /** Skips arithmetic after `$((`; returns the index after `))`. */
  #arithmetic(at: number): number {
    const t = this.text;
    let depth = 2;
    for (let i = at; i < t.length; i++) {
      if (t[i] === "$" && t[i + 1] === "(" && t[i + 2] !== "(") {
        i = this.#substitute(i + 2, ")");
        continue;
      }
      if (t[i] === "(") depth++;
      else if (t[i] === ")" && --depth === 0) return i + 1;
    }
    throw new Unsplittable('an unterminated "$(("');
  }

  /** A substitution's commands from `at` to its closer; returns the closer's index. */
  #substitute(at: number, closer: ")" | "`"): number {
    const inner = new Scanner(this.text, this.out, this.depth + 1);
    return inner.run(at, closer);
  }

  /** A redirection operator at `at`: its target word is not an argument. */
  #redirection(at: number): number {
    const t = this.text;
    // An fd number written right before the operator belongs to it.
    if (this.#inWord && /^\d+$/.test(this.#word) && !this.#expanded) {
      this.#word = "";
      this.#inWord = false;
    } else this.#endWord();
    let i = at;
    if (t[i] === "&") i++;
    const op = t[i] as string;
    i++;
    if (op === "<" && t.startsWith("<<", i - 1) && t[i] === "<") {
      if (t[i + 1] === "<") i += 2; // <<< here-string: the word is data
      else {
        i++;
        const stripTabs = t[i] === "-";
        if (stripTabs) i++;
        this.#pendingHeredoc = { stripTabs };
        return i;
      }
    } else if (t[i] === op || t[i] === "&" || t[i] === "|" || (op === "<" && t[i] === ">")) i++;
    this.#target = true;
    return i;
  }

  /** After a newline: skips the bodies of pending here-documents; returns where scanning resumes. */
  #afterHeredocs(at: number): number {
    const t = this.text;
    let i = at;
    while (this.#heredocs.length > 0) {
      const { delimiter, stripTabs } = this.#heredocs.shift() as {
        delimiter: string;
        stripTabs: boolean;
      };
      for (;;) {
        if (i >= t.length) throw new Unsplittable(`an unterminated here-document "${delimiter}"`);
        const end = t.indexOf("\n", i);
        const line = t.slice(i, end < 0 ? t.length : end);
        i = end < 0 ? t.length : end + 1;
        if ((stripTabs ? line.replace(/^\t+/, "") : line) === delimiter) break;
      }
    }
    return i;
  }
}
