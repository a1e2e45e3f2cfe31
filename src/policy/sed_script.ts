/**
 * Finds the GNU sed commands that execute programs or touch files other
 * than sed's input: `e` (run a command), `s///e` (run the pattern space),
 * `w`/`W` and `s///w` (write a file), `r`/`R` (read any file, out of reach of
 * argument path confinement), and a script read with `-f` (which we cannot
 * inspect). GTFOBins: https://gtfobins.github.io/gtfobins/sed/
 *
 * The scanner follows GNU sed 4.9's grammar (compile.c) closely enough to
 * find command letters, and fails closed: text it cannot parse counts as
 * dangerous. Labels and `v`'s version end where GNU sed 4.9 ends them (at a
 * blank, a newline or `;`: `:a e id` and `v 4.2 e id` run `id`), and `a`/`i`/`c`
 * text at a newline; where the grammar is loose the scanner stops earlier
 * than sed and parses the rest as commands: over-refusal, never a miss.
 *
 * @module
 */

import { longOptionName } from "./flags.ts";

/** Where a sed invocation takes its script from. */
export interface SedScripts {
  readonly scripts: readonly string[];
  /**
   * Indexes (into the arguments) of the words that hold script text, which
   * names no path; empty when an option was not understood, so that every
   * word stays subject to the path check.
   */
  readonly scriptIndexes: readonly number[];
  /** The first `-f`/`--file` value, or null. */
  readonly scriptFile: string | null;
}

const LONG_WITH_VALUE = ["expression", "file", "line-length"];
/** GNU sed 4.9's long options without a separate value (`sed --help`). */
// deno-fmt-ignore
const PLAIN_LONG = [
  "quiet", "silent", "debug", "follow-symlinks", "in-place", "posix", "regexp-extended",
  "separate", "sandbox", "unbuffered", "null-data", "zero-terminated", "binary", "help", "version",
];
/** GNU sed 4.9's short options without a value (`-i` takes an attached suffix). */
const PLAIN_SHORT = new Set([..."nrEsuzb"]);

/** Resolves a long option abbreviation to one of `names`, conservatively (first prefix match). */
function expandLong(name: string, names: readonly string[]): string | null {
  return names.find((candidate) => candidate.startsWith(name)) ?? null;
}

/**
 * Emulates GNU getopt for sed's arguments: `-e`/`--expression` values are
 * scripts; without any `-e`/`-f`, the first operand is the script.
 */
export function sedScripts(args: readonly string[]): SedScripts {
  const scripts: string[] = [];
  const scriptIndexes: number[] = [];
  const operands: number[] = [];
  let scriptFile: string | null = null;
  let sawScriptOption = false;
  let understood = true;
  for (let index = 0; index < args.length; index++) {
    const word = args[index] as string;
    if (word === "--") {
      for (let rest = index + 1; rest < args.length; rest++) operands.push(rest);
      break;
    }
    const longName = longOptionName(word);
    if (longName !== null) {
      const option = expandLong(longName, LONG_WITH_VALUE);
      if (option === null) {
        if (expandLong(longName, PLAIN_LONG) === null) understood = false;
        continue;
      }
      const equals = word.indexOf("=");
      const valueIndex = equals === -1 ? ++index : index;
      const value = equals === -1 ? args[valueIndex] : word.slice(equals + 1);
      if (value === undefined) continue;
      if (option === "expression") {
        scripts.push(value);
        scriptIndexes.push(valueIndex);
        sawScriptOption = true;
      } else if (option === "file") {
        scriptFile ??= value;
        sawScriptOption = true;
      }
      continue;
    }
    if (word.startsWith("-") && word.length > 1) {
      for (let at = 1; at < word.length; at++) {
        const letter = word[at] as string;
        if (letter === "i") break; // -i[SUFFIX]: the rest is the suffix
        if (letter === "e" || letter === "f" || letter === "l") {
          const attached = word.slice(at + 1);
          const valueIndex = attached.length > 0 ? index : ++index;
          const value = attached.length > 0 ? attached : args[valueIndex];
          if (value !== undefined && letter === "e") {
            scripts.push(value);
            scriptIndexes.push(valueIndex);
          }
          if (value !== undefined && letter === "f") scriptFile ??= value;
          if (letter !== "l") sawScriptOption = true;
          break;
        }
        if (!PLAIN_SHORT.has(letter)) understood = false;
      }
      continue;
    }
    operands.push(index);
  }
  const first = operands[0];
  if (!sawScriptOption && first !== undefined) {
    scripts.push(args[first] as string);
    scriptIndexes.push(first);
  }
  return { scripts, scriptIndexes: understood ? scriptIndexes : [], scriptFile };
}

const NO_ARGUMENT_COMMANDS = new Set([
  "=",
  "d",
  "D",
  "g",
  "G",
  "h",
  "H",
  "n",
  "N",
  "p",
  "P",
  "x",
  "z",
  "F",
]);
const NUMBER_ARGUMENT_COMMANDS = new Set(["l", "L", "q", "Q"]);
const LABEL_COMMANDS = new Set([":", "b", "t", "T", "v"]);
const TEXT_COMMANDS = new Set(["a", "i", "c"]);
const DANGEROUS_COMMANDS: ReadonlyMap<string, string> = new Map([
  ["e", "runs a command"],
  ["r", "reads a file"],
  ["R", "reads a file"],
  ["w", "writes a file"],
  ["W", "writes a file"],
]);

class SedReader {
  #text: string;
  position = 0;
  constructor(text: string) {
    this.#text = text;
  }
  get done(): boolean {
    return this.position >= this.#text.length;
  }
  peek(): string {
    return this.#text[this.position] ?? "";
  }
  next(): string {
    return this.#text[this.position++] ?? "";
  }
  skipBlanks(): void {
    while (this.peek() === " " || this.peek() === "\t") this.position++;
  }
  skipDigits(): void {
    while (/[0-9]/.test(this.peek())) this.position++;
  }
  /**
   * Consumes a label or version argument (`:a`, `b a`, `v 4.2`). GNU sed 4.9
   * ends it at a blank, a newline or `;` and reads what follows as the next
   * command (`:a e id` runs `id`), so only the characters a label is made of
   * in practice are consumed: stopping earlier than sed can only over-refuse.
   */
  skipLabel(): void {
    this.skipBlanks();
    while (!this.done && /[A-Za-z0-9_.+-]/.test(this.peek())) this.position++;
  }
  /**
   * Consumes the text of `a`, `i` or `c`. sed takes it to the end of the line
   * (`a x\ne id` runs `id`); stopping at `;` as well only over-refuses.
   */
  skipText(): void {
    while (!this.done && this.peek() !== ";" && this.peek() !== "\n") this.position++;
  }
  /** Consumes a delimited part (`/regex/`), honouring backslash escapes. False when unterminated. */
  skipDelimited(delimiter: string): boolean {
    while (!this.done) {
      const character = this.next();
      if (character === "\\") {
        this.next();
      } else if (character === delimiter) {
        return true;
      }
    }
    return false;
  }
}

function skipAddress(reader: SedReader): boolean {
  const first = reader.peek();
  if (/[0-9]/.test(first)) {
    reader.skipDigits();
    if (reader.peek() === "~") {
      reader.next();
      reader.skipDigits();
    }
    return true;
  }
  if (first === "$") {
    reader.next();
    return true;
  }
  if (first === "/" || first === "\\") {
    reader.next();
    const delimiter = first === "/" ? "/" : reader.next();
    if (delimiter === "" || delimiter === "\n" || delimiter === "\\") return false;
    if (!reader.skipDelimited(delimiter)) return false;
    while (reader.peek() === "I" || reader.peek() === "M") reader.next();
    return true;
  }
  return true; // no address
}

/**
 * Returns why `script` is dangerous (a fragment that follows "the script"),
 * or null when every command in it only transforms sed's own input.
 */
export function findSedScriptDanger(script: string): string | null {
  const reader = new SedReader(script);
  const unparsable = "cannot be parsed, so htmcp cannot show it is harmless";
  while (true) {
    while (/[ \t;\n]/.test(reader.peek()) && !reader.done) reader.next();
    if (reader.done) return null;
    if (reader.peek() === "#") {
      while (!reader.done && reader.peek() !== "\n") reader.next();
      continue;
    }
    if (!skipAddress(reader)) return unparsable;
    reader.skipBlanks();
    if (reader.peek() === ",") {
      reader.next();
      reader.skipBlanks();
      if (reader.peek() === "+" || reader.peek() === "~") {
        reader.next();
        reader.skipDigits();
      } else if (!skipAddress(reader)) {
        return unparsable;
      }
    }
    reader.skipBlanks();
    while (reader.peek() === "!" || reader.peek() === " ") reader.next();
    const command = reader.next();
    const danger = DANGEROUS_COMMANDS.get(command);
    if (danger !== undefined) return `uses the sed command "${command}", which ${danger}`;
    if (command === "{" || command === "}") continue;
    if (NO_ARGUMENT_COMMANDS.has(command)) {
      // nothing to consume
    } else if (NUMBER_ARGUMENT_COMMANDS.has(command)) {
      reader.skipBlanks();
      reader.skipDigits();
    } else if (LABEL_COMMANDS.has(command)) {
      // What follows the label is parsed as the next command, with or
      // without a separator, exactly because sed does so.
      reader.skipLabel();
      continue;
    } else if (TEXT_COMMANDS.has(command)) {
      reader.skipText();
      continue;
    } else if (command === "s" || command === "y") {
      const delimiter = reader.next();
      if (delimiter === "" || delimiter === "\n" || delimiter === "\\") return unparsable;
      if (!reader.skipDelimited(delimiter) || !reader.skipDelimited(delimiter)) {
        return unparsable;
      }
      if (command === "s") {
        while (/[gpiImM0-9ew]/.test(reader.peek()) && !reader.done) {
          const flag = reader.next();
          if (flag === "e") return `uses the s///e flag, which runs the pattern space as a command`;
          if (flag === "w") return `uses the s///w flag, which writes a file`;
        }
      }
    } else {
      return unparsable;
    }
    reader.skipBlanks();
    const end = reader.peek();
    if (!(reader.done || end === ";" || end === "}" || end === "#" || end === "\n")) {
      return unparsable;
    }
  }
}
