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
 * Files can also be named by expression, which no argument check sees: awk
 * opens every `ARGV[i]` below `ARGC` as input, so
 * `BEGIN{ARGV[1]="\057etc\057shadow";ARGC=2}` reads a host file whose name
 * never appears in the argv. Programs that mention `ARGV`, `ARGC`,
 * `ENVIRON` (the command's environment), `PROCINFO`, gawk's `SYMTAB` and
 * `FUNCTAB` (indirect access to any of those) or `close()` are refused, and
 * so are `-v`/operand assignments to those names.
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
/** gawk's and POSIX's short options that take no value. */
const PLAIN_SHORT = new Set([..."bcCgMnNOPrsStVz"]);
/** Long options known to take no value (gawk). */
// deno-fmt-ignore
const PLAIN_LONG = [
  "characters-as-bytes", "traditional", "copyright", "gen-pot", "help", "lint", "bignum",
  "use-lc-numeric", "non-decimal-data", "optimize", "no-optimize", "posix", "re-interval",
  "sandbox", "lint-old", "version", "csv",
];
/**
 * Variables through which a program names files or reads the environment
 * (`ARGV`/`ARGC` choose the input files, `ENVIRON` and `PROCINFO` expose the
 * process, gawk's `SYMTAB`/`FUNCTAB` reach any of them indirectly).
 */
const SPECIAL_NAMES = ["ARGV", "ARGC", "ENVIRON", "PROCINFO", "SYMTAB", "FUNCTAB"];
const SPECIAL_NAME = new RegExp(`\\b(${SPECIAL_NAMES.join("|")})\\b`);

/** What an awk invocation asks for. */
export interface AwkInvocation {
  /** The program texts (`-e`/`--source` values, or the first operand). */
  readonly programs: readonly string[];
  /**
   * Indexes (into the arguments) of the words that hold program text, which
   * name no path; empty when an option was not understood, so that every
   * word stays subject to the path check.
   */
  readonly programIndexes: readonly number[];
  /** The first option that loads code or writes a file, as typed, or null. */
  readonly dangerousOption: string | null;
  /** The first `-v` or operand assignment to a special variable (`ARGC=2`), or null. */
  readonly specialAssignment: string | null;
}

/** Whether `text` is `NAME=value` for one of the special variables. */
function assignsSpecial(text: string): boolean {
  const match = /^([A-Za-z_][A-Za-z0-9_]*)=/.exec(text);
  return match !== null && SPECIAL_NAMES.includes(match[1] as string);
}

/** Emulates getopt over awk's (POSIX, gawk and mawk) options. */
export function awkInvocation(args: readonly string[]): AwkInvocation {
  const programs: string[] = [];
  const programIndexes: number[] = [];
  const operands: number[] = [];
  let understood = true;
  let specialAssignment: string | null = null;
  const noteAssignment = (text: string) => {
    if (specialAssignment === null && assignsSpecial(text)) specialAssignment = text;
  };
  const refuse = (option: string): AwkInvocation => ({
    programs,
    programIndexes: [],
    dangerousOption: option,
    specialAssignment,
  });
  for (let index = 0; index < args.length; index++) {
    const word = args[index] as string;
    if (word === "--") {
      for (let rest = index + 1; rest < args.length; rest++) operands.push(rest);
      break;
    }
    const longName = longOptionName(word);
    if (longName !== null) {
      if (DANGEROUS_LONG.some((name) => name.startsWith(longName))) return refuse(word);
      const option = LONG_WITH_VALUE.find((name) => name.startsWith(longName));
      if (option === undefined) {
        if (!PLAIN_LONG.some((name) => name.startsWith(longName))) understood = false;
        continue;
      }
      const equals = word.indexOf("=");
      const valueIndex = equals === -1 ? ++index : index;
      const value = equals === -1 ? args[valueIndex] : word.slice(equals + 1);
      if (value === undefined) continue;
      if (option === "source") {
        programs.push(value);
        programIndexes.push(valueIndex);
      } else if (option === "assign") {
        noteAssignment(value);
      }
      continue;
    }
    if (word.startsWith("-") && word.length > 1) {
      for (let at = 1; at < word.length; at++) {
        const letter = word[at] as string;
        if (DANGEROUS_SHORT.has(letter)) return refuse(`-${letter}`);
        if (letter === "F" || letter === "v" || letter === "e") {
          const attached = word.slice(at + 1);
          const valueIndex = attached.length > 0 ? index : ++index;
          const value = attached.length > 0 ? attached : args[valueIndex];
          if (value === undefined) break;
          if (letter === "e") {
            programs.push(value);
            programIndexes.push(valueIndex);
          } else if (letter === "v") {
            noteAssignment(value);
          }
          break;
        }
        if (letter === "L") break; // gawk -L[value]: the rest is lint's value
        if (!PLAIN_SHORT.has(letter)) understood = false;
      }
      continue;
    }
    operands.push(index);
  }
  // Without -e/--source the first operand is the program; every other
  // operand is an input file or a `NAME=value` assignment.
  const first = operands[0];
  if (programs.length === 0 && first !== undefined) {
    programs.push(args[first] as string);
    programIndexes.push(first);
    operands.shift();
  }
  for (const index of operands) noteAssignment(args[index] as string);
  return {
    programs,
    programIndexes: understood ? programIndexes : [],
    dangerousOption: null,
    specialAssignment,
  };
}

/**
 * Returns why the awk program text is dangerous (a fragment following
 * "the program"), or null.
 */
export function findAwkProgramDanger(program: string): string | null {
  if (/\bsystem\b/.test(program)) return `calls system(), which runs a command`;
  const special = SPECIAL_NAME.exec(program);
  if (special !== null) {
    return `uses ${
      special[1]
    }, through which a program names the files it reads or reads the environment`;
  }
  if (/\bclose\b/.test(program)) {
    return `calls close(), which only matters for files and commands a program opens itself`;
  }
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
