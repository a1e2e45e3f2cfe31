/**
 * Finds the GNU sed commands that execute programs or touch files other
 * than sed's input: `e` (run a command), `s///e` (run the pattern space),
 * `w`/`W` and `s///w` (write a file), `r`/`R` (read any file, out of reach of
 * argument path confinement), and a script read with `-f` (which we cannot
 * inspect). GTFOBins: https://gtfobins.github.io/gtfobins/sed/
 *
 * The scanner follows GNU sed 4.9's grammar (compile.c) closely enough to
 * find command letters, and fails closed: text it cannot parse counts as
 * dangerous. Where the grammar is loose (labels, `a`/`i`/`c` text), it stops
 * early at `;`, so trailing text is parsed as commands: over-refusal, never
 * a miss.
 *
 * @module
 */

import { longOptionName } from "./flags.ts";

/** Where a sed invocation takes its script from. */
export interface SedScripts {
  readonly scripts: readonly string[];
  /** The first `-f`/`--file` value, or null. */
  readonly scriptFile: string | null;
}

const LONG_WITH_VALUE = ["expression", "file", "line-length"];

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
  const operands: string[] = [];
  let scriptFile: string | null = null;
  let sawScriptOption = false;
  for (let index = 0; index < args.length; index++) {
    const word = args[index] as string;
    if (word === "--") {
      operands.push(...args.slice(index + 1));
      break;
    }
    const longName = longOptionName(word);
    if (longName !== null) {
      const option = expandLong(longName, LONG_WITH_VALUE);
      if (option === null) continue;
      const equals = word.indexOf("=");
      const value = equals === -1 ? args[++index] : word.slice(equals + 1);
      if (value === undefined) continue;
      if (option === "expression") {
        scripts.push(value);
        sawScriptOption = true;
      } else if (option === "file") {
        scriptFile ??= value;
        sawScriptOption = true;
      }
      continue;
    }
    if (word.startsWith("-") && word.length > 1) {
      for (let at = 1; at < word.length; at++) {
        const letter = word[at];
        if (letter === "i") break; // -i[SUFFIX]: the rest is the suffix
        if (letter === "e" || letter === "f" || letter === "l") {
          const attached = word.slice(at + 1);
          const value = attached.length > 0 ? attached : args[++index];
          if (value !== undefined && letter === "e") scripts.push(value);
          if (value !== undefined && letter === "f") scriptFile ??= value;
          if (letter !== "l") sawScriptOption = true;
          break;
        }
      }
      continue;
    }
    operands.push(word);
  }
  if (!sawScriptOption && operands[0] !== undefined) scripts.push(operands[0]);
  return { scripts, scriptFile };
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
  /** Consumes up to `;` or the end (labels, text): stopping early over-refuses. */
  skipToSemicolon(): void {
    while (!this.done && this.peek() !== ";") this.position++;
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
    } else if (LABEL_COMMANDS.has(command) || TEXT_COMMANDS.has(command)) {
      reader.skipToSemicolon();
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
