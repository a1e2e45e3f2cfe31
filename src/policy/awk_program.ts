/**
 * Finds awk program text and options that run commands or touch files other
 * than awk's input: `system()`, pipes to and from commands (`print | "sh"`,
 * `"cmd" | getline`, gawk's `|&` coprocesses and `/inet/` sockets),
 * output redirection (`print > "f"`), input redirection (`getline < "f"`,
 * out of reach of argument path confinement), gawk's `@load`/`@include` and
 * indirect calls (`@f()`), the old `extension()` builtin, and options that
 * load code or write files (`-f`, `-E`, `-i`, `-l`, `-W`, `-d`, `-D`, `-o`,
 * `-p` and their long forms). GTFOBins: https://gtfobins.github.io/gtfobins/awk/
 *
 * This is a token-level scan, not a parser: it also refuses the same
 * characters inside string literals and regexes (`/a|b/`), and `<`/`>` used
 * as comparisons (`<=`, `>=` and `||` are allowed). Over-refusal is the
 * price of never missing one.
 *
 * @module
 */

import { longOptionName } from "./flags.ts";

/** Long options that load code or write files: refused outright. */
const DANGEROUS_LONG = [
  "file",
  "exec",
  "include",
  "load",
  "dump-variables",
  "debug",
  "profile",
  "pretty-print",
];
/** Long options whose value is the next word when not attached with `=`. */
const LONG_WITH_VALUE = ["field-separator", "assign", "source"];
/** Short options that load code, write files or take mawk/gawk `-W` options. */
const DANGEROUS_SHORT = new Set(["f", "E", "i", "l", "W", "d", "D", "o", "p"]);

/** What an awk invocation asks for. */
export interface AwkInvocation {
  /** The program texts (`-e`/`--source` values, or the first operand). */
  readonly programs: readonly string[];
  /** The first option that loads code or writes a file, as typed, or null. */
  readonly dangerousOption: string | null;
}

/** Emulates getopt over awk's (POSIX, gawk and mawk) options. */
export function awkInvocation(args: readonly string[]): AwkInvocation {
  const programs: string[] = [];
  const operands: string[] = [];
  let sawSource = false;
  for (let index = 0; index < args.length; index++) {
    const word = args[index] as string;
    if (word === "--") {
      operands.push(...args.slice(index + 1));
      break;
    }
    const longName = longOptionName(word);
    if (longName !== null) {
      if (DANGEROUS_LONG.some((name) => name.startsWith(longName))) {
        return { programs, dangerousOption: word };
      }
      const option = LONG_WITH_VALUE.find((name) => name.startsWith(longName));
      if (option === undefined) continue;
      const equals = word.indexOf("=");
      const value = equals === -1 ? args[++index] : word.slice(equals + 1);
      if (option === "source" && value !== undefined) {
        programs.push(value);
        sawSource = true;
      }
      continue;
    }
    if (word.startsWith("-") && word.length > 1) {
      for (let at = 1; at < word.length; at++) {
        const letter = word[at] as string;
        if (DANGEROUS_SHORT.has(letter)) return { programs, dangerousOption: `-${letter}` };
        if (letter === "F" || letter === "v" || letter === "e") {
          const attached = word.slice(at + 1);
          const value = attached.length > 0 ? attached : args[++index];
          if (letter === "e" && value !== undefined) {
            programs.push(value);
            sawSource = true;
          }
          break;
        }
        if (letter === "L") break; // gawk -L[value]: the rest is lint's value
      }
      continue;
    }
    operands.push(word);
  }
  if (!sawSource && operands[0] !== undefined) programs.push(operands[0]);
  return { programs, dangerousOption: null };
}

/**
 * Returns why the awk program text is dangerous (a fragment following
 * "the program"), or null.
 */
export function findAwkProgramDanger(program: string): string | null {
  if (/\bsystem\b/.test(program)) return `calls system(), which runs a command`;
  if (/\bextension\b/.test(program)) return `calls extension(), which loads native code`;
  if (program.includes("@")) {
    return `uses "@" (gawk @load, @include or an indirect call), which can load code or call system()`;
  }
  for (let index = 0; index < program.length; index++) {
    const character = program[index];
    const next = program[index + 1];
    if (character === "|") {
      if (next === "|") {
        index++;
        continue;
      }
      return `uses "|", which pipes to or from a command`;
    }
    if ((character === ">" || character === "<") && next !== "=") {
      return `uses "${character}", which redirects output to or input from a file`;
    }
    if ((character === ">" || character === "<") && next === "=") index++;
  }
  return null;
}
